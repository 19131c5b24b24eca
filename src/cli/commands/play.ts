/**
 * `rlvr play`: serves the training page (dashboard/train/, built with Vite on first use) on
 * 127.0.0.1 and prints its URL. The page trains the quickstart's run (or, with `--model`, a
 * pretrained model's LoRA on word problems, its files served read-only) in the browser tab — jax-js
 * on WebGPU when the browser offers an adapter, else on Wasm — with live curves, held-out
 * evaluations and samples, and downloads the trained model as a Hugging Face checkpoint (zip).
 * The page is static: any web server can host dashboard/train/dist, ideally with the two headers
 * below (they let jax-js's Wasm backend use one worker thread per core).
 */
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import type { Command } from "commander";
import { ensurePlayPageBuilt } from "../../browser/build.ts";
import { resolveConfigPaths } from "../../config/paths.ts";
import { missingModel } from "../../engines/open-kind.ts";
import { startDashboardServer, type DashboardServer, type MountedFiles } from "../../dashboard/server.ts";

/**
 * Cross-origin isolation: without it a page has no SharedArrayBuffer, and jax-js's Wasm backend
 * runs single-threaded. The page loads nothing from other origins, so these cost nothing.
 */
export const ISOLATION_HEADERS = { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" };

/** Where the page fetches the model's files (`rlvr play --model`): MODEL_PREFIX + "index.json" lists them. */
export const MODEL_PREFIX = "/model/";

/** The files of a model directory the page reads (those present of them; config.json, model.safetensors and tokenizer.json are required). */
export const PLAY_MODEL_FILES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja", "chat_template.json", "generation_config.json"] as const;

/**
 * The model directory `rlvr play --model <v>` serves: a Hugging Face directory, or a catalogue name
 * resolved as `model.path` resolves it (where `rlvr setup model <name>` imported it).
 * @throws a `rlvr play --model: …` line when the directory or one of its required files is missing
 */
export function playModelMount(v: string): MountedFiles {
  const dir = (resolveConfigPaths({ model: { path: v } }, process.cwd()) as { model: { path: string } }).model.path;
  if (!existsSync(dir)) throw new Error(`rlvr play --model: ${missingModel(dir).replace(/^config error at model\.path: /, "")}`);
  for (const f of ["config.json", "model.safetensors", "tokenizer.json"]) if (!existsSync(join(dir, f))) throw new Error(`rlvr play --model: ${join(dir, f)} not found; a model directory needs config.json, model.safetensors and tokenizer.json`);
  return { prefix: MODEL_PREFIX, dir, label: basename(dir), files: PLAY_MODEL_FILES.filter((f) => existsSync(join(dir, f))) };
}

/**
 * Build (if needed) and serve the training page; resolves once it is listening.
 * @param o.model a Hugging Face model directory or catalogue name: its files are served read-only
 *   under MODEL_PREFIX and the page trains it under LoRA on word problems (src/browser/session.ts)
 *   instead of the quickstart's model
 * @throws as playModelMount
 */
export async function startPlay(o: { port?: number; log?: (msg: string) => void; isolate?: boolean; model?: string } = {}): Promise<DashboardServer> {
  const mount = o.model !== undefined ? playModelMount(o.model) : undefined;
  const dist = await ensurePlayPageBuilt({ log: o.log });
  return startDashboardServer([], dist, { port: o.port, headers: o.isolate === false ? {} : ISOLATION_HEADERS, ...(mount ? { mount } : {}) });
}

export function register(program: Command): void {
  program
    .command("play")
    .description("serve a page that trains the quickstart's model (or, with --model, a pretrained model's LoRA) in your browser (WebGPU or Wasm)")
    .option("--port <port>", "port on 127.0.0.1 (default: a free one)", (v) => parseInt(v, 10))
    .option("--model <dir or name>", "train this Hugging Face model (a directory, or a catalogue name such as smollm2-135m-instruct) under LoRA on word problems, instead of the quickstart's tiny model")
    .action(async (o: { port?: number; model?: string }) => {
      const log = (m: string) => process.stderr.write(m + "\n");
      const d = await startPlay({ port: o.port, log, ...(o.model !== undefined ? { model: o.model } : {}) });
      process.stdout.write(`rlvr play: ${d.url}\n`);
      log("open it in a browser and press Train; Ctrl+C stops the server");
      const stop = () => void d.close().then(() => process.exit(0));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
