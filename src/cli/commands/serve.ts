/**
 * `rlvr serve <checkpoint|run-dir> [--port N] [--host H]`: an OpenAI-compatible server over the
 * model (src/serve/, docs/serve.md). Prints the base URL on stdout once listening.
 */
import type { Command } from "commander";
import { serve } from "../../serve/server.ts";
import { loadCommandPlugins, withPluginOption } from "../plugins.ts";

export interface ServeCommandOptions {
  port: number;
  host: string;
  engine: "embedded" | "torch";
  name?: string;
  batchWindow: number;
  capture?: boolean;
  weightSync?: boolean;
  seed: number;
  plugin: string[];
  saveTo?: string;
  saveEvery?: number;
}

export function register(program: Command): void {
  withPluginOption(program
    .command("serve"))
    .description("serve a checkpoint over an OpenAI-compatible HTTP API (/v1/chat/completions, /v1/completions, /v1/responses, /v1/models)")
    .argument("<path>", "checkpoint directory, or run directory (serves its checkpoints/final)")
    .option("--port <n>", "port (0 = a free one)", (v) => parseInt(v, 10), 8000)
    .option("--host <h>", "host to listen on", "127.0.0.1")
    .option("--engine <kind>", "engine: embedded or torch", "embedded")
    .option("--name <id>", "model id clients send (default: the run's name)")
    .option("--batch-window <ms>", "milliseconds to collect concurrent requests into one engine call", parseFloat, 5)
    .option("--capture", "record completions by episode (x-rlvr-episode) for training (docs/serve.md)")
    .option("--weight-sync", "let a trainer load new weights (POST /v1/rlvr/weights; rollout: {engine: openai} pushes them)")
    .option("--seed <s>", "first seed of requests that give none", (v) => parseInt(v, 10), 1)
    .option("--save-to <dir>", "with --capture: save the trained model (weights, optimizer state, counters) here on shutdown; rlvr serve <dir> --capture continues from it")
    .option("--save-every <n>", "with --save-to: also save after every n capture updates", (v) => parseInt(v, 10))
    .action(async (path: string, o: ServeCommandOptions) => {
      if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) throw new Error(`rlvr serve: --port must be an integer in [0, 65535], got ${o.port}`);
      if (o.engine !== "embedded" && o.engine !== "torch") throw new Error(`rlvr serve: --engine must be embedded or torch, got "${o.engine}"`);
      await loadCommandPlugins(o.plugin, path); // the run's plugins and --plugin modules
      if (o.saveEvery !== undefined && (!Number.isInteger(o.saveEvery) || o.saveEvery < 1)) throw new Error(`rlvr serve: --save-every must be an integer >= 1, got ${o.saveEvery}`);
      if (o.saveEvery !== undefined && o.saveTo === undefined) throw new Error("rlvr serve: --save-every needs --save-to <dir> (where to save)");
      if (o.saveTo !== undefined && !o.capture) throw new Error("rlvr serve: --save-to saves what capture training learns; add --capture");
      const s = await serve({ checkpoint: path, port: o.port, host: o.host, engineKind: o.engine, modelName: o.name, batchWindowMs: o.batchWindow, capture: !!o.capture, weightSync: !!o.weightSync, seed: o.seed, saveTo: o.saveTo, saveEvery: o.saveEvery });
      process.stdout.write(`rlvr serve: ${s.url} (model "${s.ctx.modelName}")\n`);
      const stop = () => {
        void s.close().then(() => process.exit(0));
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
