/**
 * `rlvr tinker [--port N] [--model name=dir ...] [--data-dir D]`: a Tinker API server (src/tinker/,
 * docs/tinker.md) that the official `tinker` SDK uses with `base_url`. Prints the base URL once listening.
 */
import type { Command } from "commander";
import { serveTinker } from "../../tinker/server.ts";

interface TinkerCommandOptions {
  port: number;
  host: string;
  model: string[];
  dataDir?: string;
  seed: number;
  engine: "embedded" | "torch";
}

/** "name=dir" → [name, dir]. @throws naming the flag. */
function parseModel(spec: string): [string, string] {
  const i = spec.indexOf("=");
  if (i <= 0 || i === spec.length - 1) throw new Error(`rlvr tinker: --model expects name=directory, got "${spec}"`);
  return [spec.slice(0, i), spec.slice(i + 1)];
}

export function register(program: Command): void {
  program
    .command("tinker")
    .description("serve the Tinker training API (forward_backward, optim_step, sample, save_state) for the official tinker SDK")
    .option("--port <n>", "port (0 = a free one)", (v) => parseInt(v, 10), 8000)
    .option("--host <h>", "host to listen on", "127.0.0.1")
    .option("--model <name=dir>", "register a base model name for a local Hugging Face directory (repeatable)", (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option("--data-dir <dir>", "where checkpoints (tinker:// paths) are written (default: a temporary directory)")
    .option("--engine <kind>", "engine holding each model: embedded or torch", "embedded")
    .option("--seed <s>", "seed of unseeded sampling requests", (v) => parseInt(v, 10), 0)
    .action(async (o: TinkerCommandOptions) => {
      if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) throw new Error(`rlvr tinker: --port must be an integer in [0, 65535], got ${o.port}`);
      if (o.engine !== "embedded" && o.engine !== "torch") throw new Error(`rlvr tinker: --engine must be embedded or torch, got "${o.engine}"`);
      const models = Object.fromEntries(o.model.map(parseModel));
      const s = await serveTinker({ port: o.port, host: o.host, models, dataDir: o.dataDir, seed: o.seed, engine: o.engine });
      process.stdout.write(`rlvr tinker: ${s.url} (checkpoints in ${s.dataDir})\n`);
      const stop = () => void s.close().then(() => process.exit(0));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
