/**
 * `serveTinker()`: a self-hosted server of the Tinker API (Thinking Machines' training API) that
 * the official Python SDK (`tinker` 0.38), pointed at it with `base_url`, uses unchanged. It sits
 * on rlvr's engine contract: the loss is computed in TypeScript (src/algorithms/losses/tinker.ts)
 * and the engine back-propagates its cotangent; gradients accumulate until `optim_step`.
 * Routes: routes/service.ts, training.ts, checkpoints.ts, sampling.ts. See docs/tinker.md.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { UserError } from "./futures.ts";
import { TinkerState } from "./state.ts";
import { serviceRoutes } from "./routes/service.ts";
import { trainingRoutes } from "./routes/training.ts";
import { checkpointRoutes } from "./routes/checkpoints.ts";
import { samplingRoutes } from "./routes/sampling.ts";

export interface TinkerServerOptions {
  /** Port (default 8000; 0 picks a free one). */
  port?: number;
  /** Host (default 127.0.0.1). */
  host?: string;
  /** Model names clients may pass as `base_model`, each a local Hugging Face directory. Any local directory path also works. */
  models?: Record<string, string>;
  /** Where checkpoints (`tinker://` paths) are written (default: a new temporary directory). */
  dataDir?: string;
  /** The engine that holds each model: "embedded" (default; in-process) or "torch" (a Python worker per base model, shared by its LoRA clients: TorchEngine.shareBase; `rlvr setup`). */
  engine?: "embedded" | "torch";
  /** Seed of unseeded sampling requests and of model initialisation (default 0). */
  seed?: number;
  /** Longest wait of one `retrieve_future` call before it answers `try_again`, ms (default 5000). */
  pollMs?: number;
  /** One line per notable event (default: stderr). */
  log?: (line: string) => void;
}

/** A running Tinker server. */
export interface TinkerServer {
  /** The base URL to give the SDK, e.g. "http://127.0.0.1:8000". */
  url: string;
  port: number;
  app: FastifyInstance;
  /** Checkpoint root (`tinker://<run>/<kind>/<name>` lives in `<dataDir>/<run>/<kind>/<name>`). */
  dataDir: string;
  /** Stop listening and release every engine. */
  close(): Promise<void>;
}

/**
 * Start a Tinker API server.
 * @throws Error when the port is taken or a registered model directory does not exist.
 */
export async function serveTinker(o: TinkerServerOptions = {}): Promise<TinkerServer> {
  const models = o.models ?? {};
  for (const [name, dir] of Object.entries(models)) if (!existsSync(join(dir, "config.json"))) throw new Error(`rlvr tinker: model "${name}": ${dir} has no config.json (expected a Hugging Face model directory)`);
  const dataDir = resolve(o.dataDir ?? (await mkdtemp(join(tmpdir(), "rlvr-tinker-"))));
  await mkdir(dataDir, { recursive: true });
  const st = new TinkerState({ models, dataDir, engine: o.engine ?? "embedded", seed: o.seed ?? 0, pollMs: o.pollMs ?? 5000, log: o.log ?? ((l: string) => process.stderr.write(l + "\n")) });

  const app = Fastify({ logger: false, bodyLimit: 256 * 1024 * 1024 });
  app.addContentTypeParser("application/x-protobuf", { parseAs: "buffer" }, (_req, body, done) => done(null, body));
  // The SDK sends DELETE with a JSON content type and no body.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, text, done) => {
    if (text === "") return done(null, undefined);
    try {
      done(null, JSON.parse(text as string));
    } catch (e) {
      done(new UserError(`the request body is not valid JSON: ${(e as Error).message}`), undefined);
    }
  });
  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    const user = err instanceof UserError || (err.statusCode !== undefined && err.statusCode < 500);
    void reply.status(user ? 400 : 500).send({ error: err.message, category: user ? "user" : "server" });
  });
  app.setNotFoundHandler((req, reply) => {
    void reply.status(404).send({ error: `rlvr's Tinker server has no route ${req.method} ${req.url.split("?")[0]} (see docs/tinker.md for what is supported)`, category: "user" });
  });
  serviceRoutes(app, st);
  trainingRoutes(app, st);
  checkpointRoutes(app, st);
  samplingRoutes(app, st);

  const host = o.host ?? "127.0.0.1";
  await app.listen({ port: o.port ?? 8000, host });
  const addr = app.server.address();
  const port = typeof addr === "object" && addr ? addr.port : (o.port ?? 8000);
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    app,
    dataDir,
    async close() {
      await app.close();
      await st.close();
    },
  };
}
