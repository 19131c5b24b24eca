/**
 * `serve()`: an OpenAI-compatible HTTP server (Fastify) over any engine — /v1/models,
 * /v1/chat/completions, /v1/completions, /v1/responses, and in capture mode /v1/rlvr/episodes.
 * See docs/serve.md.
 */
import { existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import type { Engine } from "../core/engine.ts";
import { openEngine } from "../engines/open.ts";
import { isModelDir } from "../engines/lora.ts";
import { loadTokenizer } from "../tokenizers/index.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { Batcher } from "./batcher.ts";
import { EpisodeStore } from "./capture.ts";
import { readCaptureState, saveServed } from "./state.ts";
import type { Server, ServeContext } from "./context.ts";
import { ApiError, toApiError } from "./errors.ts";
import { chatRoutes } from "./routes/chat.ts";
import { completionRoutes } from "./routes/completions.ts";
import { episodeRoutes } from "./routes/episodes.ts";
import { modelRoutes } from "./routes/models.ts";
import { responsesRoutes } from "./routes/responses.ts";

export interface ServeOptions {
  /** A checkpoint directory, or a run directory (its checkpoints/final). Or pass `engine` and `tokenizer`. */
  checkpoint?: string;
  /** An open engine to serve (the caller keeps ownership: close() does not close it). */
  engine?: Engine;
  tokenizer?: Tokenizer;
  /** Engine kind for `checkpoint` (default "embedded"). */
  engineKind?: "embedded" | "torch";
  /** Port (default 8000; 0 picks a free one). */
  port?: number;
  /** Host (default 127.0.0.1). */
  host?: string;
  /** The model id clients send (default: the checkpoint's run name, or "rlvr"). */
  modelName?: string;
  /** Batching window in milliseconds (default 5). */
  batchWindowMs?: number;
  /** Most sampled rows per engine call (default 64). */
  maxBatchRows?: number;
  /** Record completions by episode for training (default false). */
  capture?: boolean;
  /** First server seed of unseeded requests (default 1). */
  seed?: number;
  /** Let a trainer push weights (POST /v1/rlvr/weights loads a checkpoint path; default false). */
  weightSync?: boolean;
  /** Largest request body in bytes (default 4 MiB). */
  bodyLimit?: number;
  /**
   * Capture mode: save the trained model (weights, optimizer state, counters; ./state.ts) to this
   * directory every `saveEvery` updates and when the server closes; `serve({checkpoint: saveTo,
   * capture: true})` continues from it. Default: none.
   */
  saveTo?: string;
  /** With `saveTo`: save after every this many capture updates (default 0: only on close). */
  saveEvery?: number;
}

/** A checkpoint directory for `path`: itself when it holds config.json, else its checkpoints/final. */
export function resolveServedCheckpoint(path: string): string {
  if (isModelDir(path)) return path;
  const final = join(path, "checkpoints", "final");
  if (isModelDir(final)) return final;
  throw new Error(`rlvr serve: no checkpoint at ${path}: expected config.json there or in ${final} (or a LoRA adapter's adapter_config.json)`);
}

/** The default model id: "<run>" for <run>/checkpoints/<x>, else the directory's name. */
function defaultName(dir: string): string {
  const abs = resolve(dir);
  const parent = resolve(abs, "..");
  return basename(parent) === "checkpoints" ? basename(resolve(parent, "..")) : basename(abs);
}

/**
 * Capture mode from a checkpoint that capture training saved (capture.json beside it): the
 * engines load the optimizer's moments saved beside the weights when they open it; the counters
 * (policy version, the warm-up's position) come from capture.json. Training then continues
 * instead of restarting Adam, whose first steps from fresh moments move every weight by about lr.
 */
async function restoreCapture(ctx: ServeContext, dir: string): Promise<void> {
  const st = readCaptureState(dir);
  if (!st) return;
  ctx.policyVersion = st.policyVersion;
  ctx.captureUpdates = ctx.savedAt = st.updates;
}

/**
 * Start an OpenAI-compatible server.
 * @throws Error when neither `checkpoint` nor `engine` + `tokenizer` is given, the checkpoint is
 *   missing, or the port is taken.
 */
export async function serve(o: ServeOptions): Promise<Server> {
  let engine = o.engine;
  let tokenizer = o.tokenizer;
  let owned = false;
  let name = o.modelName;
  let served: string | null = null;
  if (!engine) {
    if (!o.checkpoint) throw new Error("serve: give a checkpoint (or run) directory, or an engine and its tokenizer");
    const dir = resolveServedCheckpoint(o.checkpoint);
    served = dir;
    tokenizer ??= await loadTokenizer(dir);
    engine = await openEngine({ path: dir, engine: o.engineKind ?? "embedded" }, { tokenizer, seed: o.seed ?? 0 });
    owned = true;
    name ??= defaultName(dir);
  }
  if (!tokenizer) throw new Error("serve: an engine needs its tokenizer (serve({engine, tokenizer}))");
  const eng = engine;
  const batcher = new Batcher((req) => eng.sample(req), () => ctx.policyVersion, { windowMs: o.batchWindowMs, maxRows: o.maxBatchRows, stopTokens: [tokenizer.eosId], seed: o.seed });
  if (o.saveTo !== undefined && !o.capture) throw new Error("serve: saveTo (--save-to) saves what capture training learns; start with capture: true (--capture)");
  const ctx: ServeContext = {
    engine: eng,
    tokenizer,
    modelName: name ?? "rlvr",
    batcher,
    episodes: o.capture ? new EpisodeStore() : null,
    created: Math.floor(Date.now() / 1000),
    policyVersion: 0,
    weightSync: o.weightSync ?? false,
    captureUpdates: 0,
    autosave: o.saveTo !== undefined ? { dir: o.saveTo, every: o.saveEvery ?? 0 } : null,
    savedAt: 0,
  };
  if (o.capture && served) await restoreCapture(ctx, served);

  const app = Fastify({ logger: false, bodyLimit: o.bodyLimit ?? 4 * 1024 * 1024 });
  app.setErrorHandler((err, _req, reply) => {
    const e = toApiError(err);
    void reply.status(e.status).send(e.body());
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new ApiError(404, `no route ${req.method} ${req.url}`, "invalid_request_error", null, "not_found");
    void reply.status(404).send(e.body());
  });
  modelRoutes(app, ctx);
  chatRoutes(app, ctx);
  completionRoutes(app, ctx);
  responsesRoutes(app, ctx);
  episodeRoutes(app, ctx);

  const host = o.host ?? "127.0.0.1";
  await app.listen({ port: o.port ?? 8000, host });
  const addr = app.server.address();
  const port = typeof addr === "object" && addr ? addr.port : (o.port ?? 8000);
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const server: Server = {
    url: `http://${urlHost}:${port}/v1`,
    port,
    host,
    app,
    ctx,
    engine: eng,
    tokenizer,
    episodes: ctx.episodes,
    get policyVersion() {
      return ctx.policyVersion;
    },
    async close() {
      await app.close();
      // Capture training since the last save is not lost on shutdown.
      if (ctx.autosave && ctx.captureUpdates > ctx.savedAt) await saveServed(ctx, ctx.autosave.dir);
      if (owned) await eng.close();
    },
  };
  return server;
}
