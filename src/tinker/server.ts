/**
 * `serveTinker()`: a self-hosted server of the Tinker API (Thinking Machines' training API) that
 * the official Python SDK (`tinker` 0.38), pointed at it with `base_url`, uses unchanged. It sits
 * on rlvr's engine contract: the loss is computed in TypeScript (src/algorithms/losses/tinker.ts)
 * and the engine back-propagates its cotangent; gradients accumulate until `optim_step`.
 * See docs/tinker.md for what is supported.
 */
import { createReadStream, existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import type { Engine } from "../engines/engine.ts";
import { openEngine } from "../engines/open.ts";
import { loadTokenizer } from "../tokenizers/index.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { FutureStore, SeqQueue, UserError, type FutureResult } from "./futures.ts";
import { decodeForwardBackwardRequest, encodeForwardBackwardOutput, encodeSampleResponse } from "./proto.ts";
import { runForwardBackward } from "./train.ts";
import { sampleTinker, type TinkerSampleRequest } from "./sample.ts";

export interface TinkerServerOptions {
  /** Port (default 8000; 0 picks a free one). */
  port?: number;
  /** Host (default 127.0.0.1). */
  host?: string;
  /** Model names clients may pass as `base_model`, each a local Hugging Face directory. Any local directory path also works. */
  models?: Record<string, string>;
  /** Where checkpoints (`tinker://` paths) are written (default: a new temporary directory). */
  dataDir?: string;
  /** The engine that holds each model: "embedded" (default; in-process) or "torch" (a Python worker per model; `rlvr setup`). */
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

interface LoraConfig {
  rank: number;
  seed?: number;
  train_unembed?: boolean;
  train_mlp?: boolean;
  train_attn?: boolean;
}

interface TrainingModel {
  id: string;
  baseModel: string;
  dir: string;
  engine: Engine;
  tokenizer: Tokenizer;
  lora: LoraConfig | null;
  queue: SeqQueue;
  created: Date;
  lastRequest: Date;
}

interface SamplingSession {
  id: string;
  baseModel: string;
  modelPath: string | null;
  engine: Engine;
  tokenizer: Tokenizer;
}

/** Sampling sessions whose engines stay loaded (an older one answers "no sampling session"). */
const MAX_SAMPLERS = 8;

const CHECKPOINT_KINDS = { weights: "training", sampler_weights: "sampler", external_weights: "external" } as const;

/**
 * Start a Tinker API server.
 * @throws Error when the port is taken or a registered model directory does not exist.
 */
export async function serveTinker(o: TinkerServerOptions = {}): Promise<TinkerServer> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + "\n"));
  const models = o.models ?? {};
  for (const [name, dir] of Object.entries(models)) if (!existsSync(join(dir, "config.json"))) throw new Error(`rlvr tinker: model "${name}": ${dir} has no config.json (expected a Hugging Face model directory)`);
  const dataDir = resolve(o.dataDir ?? (await mkdtemp(join(tmpdir(), "rlvr-tinker-"))));
  await mkdir(dataDir, { recursive: true });
  const pollMs = o.pollMs ?? 5000;
  let seedCounter = o.seed ?? 0;

  const futures = new FutureStore();
  const sessions = new Map<string, { created: Date; lastHeartbeat: Date }>();
  const training = new Map<string, TrainingModel>();
  const samplers = new Map<string, SamplingSession>();
  const sampleIds = new Map<string, string[]>();
  const engines: Engine[] = [];

  /** A base model name or directory → its directory. */
  function baseDir(name: unknown, field: string): string {
    if (typeof name !== "string" || !name) throw new UserError(`${field} must be a model name or a local Hugging Face directory`);
    const dir = models[name] ?? name;
    if (!existsSync(join(dir, "config.json"))) throw new UserError(`${field}: "${name}" is neither a model this server registered (${Object.keys(models).join(", ") || "none"}) nor a local Hugging Face directory with config.json`);
    return dir;
  }

  /** A tinker:// path (or a local directory) → its directory. */
  function pathDir(p: unknown, field: string): string {
    if (typeof p !== "string" || !p) throw new UserError(`${field} must be a tinker:// path or a local directory`);
    if (p.startsWith("tinker://")) {
      const parts = p.slice(9).split("/");
      if (parts.length !== 3 || !(parts[1]! in CHECKPOINT_KINDS) || parts.some((s) => !s || s === ".." || s === ".")) throw new UserError(`${field}: "${p}" is not tinker://<run>/<weights|sampler_weights|external_weights>/<name>`);
      const dir = join(dataDir, ...parts);
      if (!existsSync(join(dir, "config.json"))) throw new UserError(`${field}: no checkpoint at ${p}`);
      return dir;
    }
    if (!existsSync(join(p, "config.json"))) throw new UserError(`${field}: ${p} is not a checkpoint directory (no config.json)`);
    return p;
  }

  async function open(dir: string, seed: number): Promise<{ engine: Engine; tokenizer: Tokenizer }> {
    const tokenizer = await loadTokenizer(dir);
    const engine = await openEngine({ path: dir, engine: o.engine ?? "embedded" }, { tokenizer, seed });
    engines.push(engine);
    return { engine, tokenizer };
  }

  function model(id: unknown): TrainingModel {
    const m = typeof id === "string" ? training.get(id) : undefined;
    if (!m) throw new UserError(`model_id: no training model "${String(id)}" on this server`);
    m.lastRequest = new Date();
    return m;
  }

  function checkName(name: unknown, field: string): string {
    if (typeof name !== "string" || !/^[A-Za-z0-9._-]+$/.test(name) || name === "." || name === "..") throw new UserError(`${field} must be a name of letters, digits, '.', '_' or '-', got ${JSON.stringify(name)}`);
    return name;
  }

  /** Run `fn` as the model's request `seq_id` (in order; a retry returns the first request's id). */
  function submitTraining(route: string, body: Record<string, unknown>, fn: (m: TrainingModel) => Promise<FutureResult>): { request_id: string; model_id: string } {
    const m = model(body["model_id"]);
    const seq = body["seq_id"];
    if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0) throw new UserError(`${route}: seq_id must be a non-negative integer`);
    const id = futures.submit(() => m.queue.run(seq, () => fn(m)), `${m.id}/${seq}/${route}`);
    return { request_id: id, model_id: m.id };
  }

  /** A new training model; its id is the SDK's `<session_id>:train:<model_seq_id>` when both are given. */
  async function createModel(body: Record<string, unknown>, dir: string, baseModel: string, lora: LoraConfig | null): Promise<TrainingModel> {
    const seed = lora?.seed ?? o.seed ?? 0;
    const { engine, tokenizer } = await open(dir, seed);
    const sid = body["session_id"];
    const mseq = body["model_seq_id"];
    const id = typeof sid === "string" && /^[A-Za-z0-9_-]+$/.test(sid) && Number.isInteger(mseq) ? `${sid}:train:${String(mseq)}` : `run-${randomUUID().slice(0, 8)}`;
    if (training.has(id)) throw new UserError(`model ${id} already exists (model_seq_id ${String(mseq)} reused in session ${String(sid)})`);
    const m: TrainingModel = { id, baseModel, dir, engine, tokenizer, lora, queue: new SeqQueue(), created: new Date(), lastRequest: new Date() };
    training.set(id, m);
    return m;
  }

  async function saveCheckpoint(m: TrainingModel, kind: keyof typeof CHECKPOINT_KINDS, name: string, optimizer: boolean): Promise<string> {
    const dir = join(dataDir, m.id, kind, name);
    await m.engine.save(dir, { optimizer });
    return `tinker://${m.id}/${kind}/${name}`;
  }

  async function newSampler(baseModel: string, dir: string, modelPath: string | null): Promise<SamplingSession> {
    const { engine, tokenizer } = await open(dir, o.seed ?? 0);
    const s: SamplingSession = { id: `sampler-${randomUUID().slice(0, 8)}`, baseModel, modelPath, engine, tokenizer };
    samplers.set(s.id, s);
    // Keep the newest MAX_SAMPLERS sampling sessions' engines in memory; older ones are released.
    for (const [id, old] of samplers) {
      if (samplers.size <= MAX_SAMPLERS) break;
      samplers.delete(id);
      engines.splice(engines.indexOf(old.engine), 1);
      await old.engine.close();
    }
    return s;
  }

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
  const body = (req: { body: unknown }): Record<string, unknown> => {
    if (!req.body || typeof req.body !== "object" || Array.isArray(req.body)) throw new UserError("the request body must be a JSON object");
    return req.body as Record<string, unknown>;
  };

  // ---------------------------------------------------------------- service, sessions
  app.get("/api/v1/healthz", async () => ({ status: "ok" }));
  app.post("/api/v1/client/config", async () => ({ pjwt_auth_enabled: false, credential_default_source: "api_key", proto_compress_fwdbwd: false, parallel_fwdbwd_chunks: false, use_pyqwest_transport: false, sample_use_retrieve_futures: false, custom_loss_server_side: false, sample_join_sampling_session: false }));
  app.post("/api/v1/client/dynamic_config", async () => ({ refresh_interval_sec: 300, sample_cancel_enabled: false }));
  app.post("/api/v1/telemetry", async () => ({ status: "accepted" }));
  app.post("/api/v1/cancel_future", async () => ({}));
  app.post("/api/v1/create_session", async (req) => {
    body(req);
    const id = `session-${randomUUID().slice(0, 8)}`;
    sessions.set(id, { created: new Date(), lastHeartbeat: new Date() });
    return { type: "create_session", session_id: id };
  });
  app.post("/api/v1/session_heartbeat", async (req) => {
    const id = body(req)["session_id"];
    const s = typeof id === "string" ? sessions.get(id) : undefined;
    if (!s) throw new UserError(`session_heartbeat: no session "${String(id)}"`);
    s.lastHeartbeat = new Date();
    return { type: "session_heartbeat" };
  });
  app.get("/api/v1/get_server_capabilities", async () => ({
    supported_models: Object.keys(models).map((name) => ({ model_name: name, trainable: true, sampleable: true })),
  }));

  // ---------------------------------------------------------------- futures
  app.post("/api/v1/retrieve_future", async (req, reply: FastifyReply) => {
    const id = body(req)["request_id"];
    const e = typeof id === "string" ? await futures.wait(id, pollMs) : undefined;
    if (!e) return reply.status(404).send({ error: `no request ${String(id)}`, category: "user" });
    if (e.state === "pending") return { type: "try_again", request_id: id, queue_state: "active" };
    if (e.state === "failed") return { error: e.error, category: e.category };
    const accept = String(req.headers["accept"] ?? "");
    if (e.result!.proto && accept.includes("application/x-protobuf")) return reply.type("application/x-protobuf").send(Buffer.from(e.result!.proto));
    return e.result!.json;
  });

  // ---------------------------------------------------------------- training
  app.post("/api/v1/create_model", async (req) => {
    const b = body(req);
    const dir = baseDir(b["base_model"], "create_model.base_model");
    const lora = (b["lora_config"] ?? null) as LoraConfig | null;
    if (lora && (!Number.isInteger(lora.rank) || lora.rank < 1)) throw new UserError("create_model.lora_config.rank must be a positive integer");
    const opt = b["optimizer_config"] as { type?: string } | undefined;
    if (opt && opt.type !== "adamw") throw new UserError(`create_model.optimizer_config.type: only "adamw" is supported, got "${opt.type}"`);
    const id = futures.submit(async () => {
      const m = await createModel(b, dir, String(b["base_model"]), lora);
      if (lora) log(`rlvr tinker: ${m.id} on ${m.baseModel}: LoRA rank ${lora.rank} requested; rlvr tinker trains every weight (full fine-tuning; docs/tinker.md)`);
      return { json: { type: "create_model", model_id: m.id } };
    }, `${String(b["session_id"])}/${String(b["model_seq_id"])}/create`);
    return { request_id: id };
  });
  app.post("/api/v1/get_info", async (req) => {
    const m = model(body(req)["model_id"]);
    const info = m.engine.info();
    return { type: "get_info", model_id: m.id, model_name: m.baseModel, is_lora: m.lora !== null, lora_rank: m.lora?.rank ?? null, model_data: { arch: info.engine, model_name: m.baseModel, tokenizer_id: m.dir } };
  });
  app.post("/api/v1/unload_model", async (req) => {
    const m = model(body(req)["model_id"]);
    training.delete(m.id);
    return { request_id: futures.submit(async () => ({ json: { type: "unload_model", model_id: m.id } })) };
  });
  app.post("/api/v1/forward_backward", async (req) => {
    if (!Buffer.isBuffer(req.body)) throw new UserError("forward_backward: expected a protobuf body (Content-Type: application/x-protobuf), as the tinker SDK sends");
    if (req.headers["content-encoding"]) throw new UserError(`forward_backward: Content-Encoding ${String(req.headers["content-encoding"])} is not supported`);
    const fb = decodeForwardBackwardRequest(req.body);
    return submitTraining(fb.forwardOnly ? "forward" : "forward_backward", { model_id: fb.modelId, seq_id: fb.seqId }, async (m) => {
      const r = await runForwardBackward(m.engine, fb);
      const outs = r.outputs.map((x) => ({ logprobs: x.logprobs, elementwise_loss: x.elementwise_loss }));
      const json = { loss_fn_output_type: "ArrayRecord", metrics: r.metrics, loss_fn_outputs: outs.map((x) => ({ logprobs: tensorJson(x.logprobs), elementwise_loss: tensorJson(x.elementwise_loss) })) };
      return { json, proto: encodeForwardBackwardOutput(outs, r.metrics) };
    });
  });
  app.post("/api/v1/optim_step", async (req) => {
    const b = body(req);
    if (b["optimizer_params"] !== undefined) throw new UserError("optim_step: only AdamParams (adam_params) are supported");
    const p = (b["adam_params"] ?? {}) as Record<string, unknown>;
    const num = (k: string, d: number): number => {
      const v = p[k] ?? d;
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw new UserError(`optim_step.adam_params.${k} must be a finite number >= 0, got ${JSON.stringify(v)}`);
      return v;
    };
    // Tinker's AdamParams defaults (tinker/types/optimizer.py).
    const step = { lr: num("learning_rate", 1e-4), beta1: num("beta1", 0.9), beta2: num("beta2", 0.95), eps: num("eps", 1e-12), weightDecay: num("weight_decay", 0), maxGradNorm: num("grad_clip_norm", 0) };
    return submitTraining("optim_step", b, async (m) => {
      const r = await m.engine.optimStep(step);
      return { json: { type: "optim_step", metrics: { grad_norm: r.gradNorm } } };
    });
  });

  // ---------------------------------------------------------------- checkpoints
  app.post("/api/v1/save_weights", async (req) => {
    const b = body(req);
    const name = checkName(b["path"] ?? `step-${String(b["seq_id"])}`, "save_weights.path");
    return submitTraining("save_weights", b, async (m) => ({ json: { type: "save_weights", path: await saveCheckpoint(m, "weights", name, true) } }));
  });
  app.post("/api/v1/save_weights_for_sampler", async (req) => {
    const b = body(req);
    if (b["kind"] !== undefined && b["kind"] !== "snapshot") throw new UserError(`save_weights_for_sampler.kind: only "snapshot" is supported, got "${String(b["kind"])}"`);
    const named = b["path"] !== undefined && b["path"] !== null;
    const name = named ? checkName(b["path"], "save_weights_for_sampler.path") : `ephemeral-${String(b["seq_id"])}-${randomUUID().slice(0, 6)}`;
    return submitTraining("save_weights_for_sampler", b, async (m) => {
      const path = await saveCheckpoint(m, "sampler_weights", name, false);
      if (named) return { json: { type: "save_weights_for_sampler", path } };
      const s = await newSampler(m.baseModel, join(dataDir, m.id, "sampler_weights", name), path);
      return { json: { type: "save_weights_for_sampler", path, sampling_session_id: s.id } };
    });
  });
  app.post("/api/v1/save_weights_external", async (req) => {
    const b = body(req);
    if (b["age_encryption_recipients"]) throw new UserError("save_weights_external: age encryption is not supported by rlvr's Tinker server");
    const name = checkName(b["path"], "save_weights_external.path");
    return submitTraining("save_weights_external", b, async (m) => {
      const path = await saveCheckpoint(m, "external_weights", name, false);
      return { json: { type: "save_weights_external", path, size_bytes: await dirSize(join(dataDir, m.id, "external_weights", name)) } };
    });
  });
  /** The directory of checkpoint `<run>/<kind>/<name>` (each part checked). @throws UserError when absent. */
  function checkpointDir(run: string, kind: string, name: string): string {
    if (!(kind in CHECKPOINT_KINDS) || [run, name].some((x) => !x || x.includes("/") || x === "." || x === "..")) throw new UserError(`no checkpoint ${run}/${kind}/${name}`);
    const dir = join(dataDir, run, kind, name);
    if (!existsSync(join(dir, "config.json"))) throw new UserError(`no checkpoint tinker://${run}/${kind}/${name}`);
    return dir;
  }
  // Checkpoint archives as local downloads: one URL per file, served by this server.
  app.get<{ Params: { id: string; "*": string } }>("/api/v1/training_runs/:id/checkpoints/*", async (req) => {
    const [kind = "", name = "", what = ""] = req.params["*"].split("/");
    if (what !== "external_weights_urls") throw new UserError(`no route GET ${req.url}`);
    const dir = checkpointDir(req.params.id, kind, name);
    const base = `${req.protocol}://${String(req.headers.host)}/api/v1/files/${encodeURIComponent(req.params.id)}/${kind}/${name}`;
    const urls = Object.fromEntries((await readdir(dir)).sort().map((f) => [f, `${base}/${encodeURIComponent(f)}`]));
    return { urls, expires: new Date(Date.now() + 7 * 24 * 3600_000).toISOString() };
  });
  app.delete<{ Params: { id: string; "*": string } }>("/api/v1/training_runs/:id/checkpoints/*", async (req, reply) => {
    const [kind = "", name = ""] = req.params["*"].split("/");
    await rm(checkpointDir(req.params.id, kind, name), { recursive: true, force: true });
    return reply.status(200).send(null);
  });
  app.get<{ Params: { run: string; kind: string; name: string; file: string } }>("/api/v1/files/:run/:kind/:name/:file", async (req, reply) => {
    const { run, kind, name, file } = req.params;
    const dir = checkpointDir(run, kind, name);
    if (!(await readdir(dir)).includes(file)) throw new UserError(`no file ${file} in tinker://${run}/${kind}/${name}`);
    return reply.type("application/octet-stream").send(createReadStream(join(dir, file)));
  });
  app.post("/api/v1/load_weights", async (req) => {
    const b = body(req);
    const dir = pathDir(b["path"], "load_weights.path");
    const withOptimizer = b["optimizer"] === true;
    const load = async (m: TrainingModel) => {
      let from = dir;
      if (!withOptimizer && existsSync(join(dir, "optimizer.safetensors"))) {
        from = await mkdtemp(join(tmpdir(), "rlvr-tinker-load-"));
        await cp(dir, from, { recursive: true, filter: (src) => !src.endsWith("optimizer.safetensors") });
      }
      try {
        await m.engine.load(from);
      } finally {
        if (from !== dir) await rm(from, { recursive: true, force: true });
      }
      return { json: { type: "load_weights", path: b["path"], model_id: m.id } };
    };
    if (b["model_id"] !== undefined) return submitTraining("load_weights", b, load);
    // Create-via-load: a new model whose first request is this load.
    const base = typeof b["base_model"] === "string" ? baseDir(b["base_model"], "load_weights.base_model") : dir;
    const id = futures.submit(async () => {
      const m = await createModel(b, base, String(b["base_model"] ?? b["path"]), null);
      return load(m);
    }, `${String(b["session_id"])}/${String(b["model_seq_id"])}/create`);
    return { request_id: id };
  });
  app.post("/api/v1/weights_info", async (req) => {
    const p = body(req)["tinker_path"];
    pathDir(p, "weights_info.tinker_path");
    const m = training.get(String(p).slice(9).split("/")[0]!);
    return { base_model: m?.baseModel ?? "unknown", is_lora: !!m?.lora, lora_rank: m?.lora?.rank ?? null };
  });
  app.get("/api/v1/training_runs", async () => {
    const runs = [...training.values()].map(runJson);
    return { training_runs: runs, cursor: { offset: 0, limit: runs.length, total_count: runs.length } };
  });
  app.get<{ Params: { id: string } }>("/api/v1/training_runs/:id", async (req) => runJson(model(req.params.id)));
  app.get<{ Params: { id: string } }>("/api/v1/training_runs/:id/checkpoints", async (req) => ({ checkpoints: await listCheckpoints(model(req.params.id).id) }));
  function runJson(m: TrainingModel) {
    return { training_run_id: m.id, base_model: m.baseModel, model_owner: "local", is_lora: m.lora !== null, lora_rank: m.lora?.rank ?? null, last_request_time: m.lastRequest.toISOString() };
  }
  async function listCheckpoints(run: string) {
    const out: Record<string, unknown>[] = [];
    for (const kind of Object.keys(CHECKPOINT_KINDS) as (keyof typeof CHECKPOINT_KINDS)[]) {
      const dir = join(dataDir, run, kind);
      if (!existsSync(dir)) continue;
      for (const name of (await readdir(dir)).sort()) {
        const st = await stat(join(dir, name));
        out.push({ checkpoint_id: `${kind}/${name}`, checkpoint_type: CHECKPOINT_KINDS[kind], time: st.mtime.toISOString(), tinker_path: `tinker://${run}/${kind}/${name}` });
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- sampling
  app.post("/api/v1/create_sampling_session", async (req) => {
    const b = body(req);
    const path = b["model_path"];
    const s = path ? await newSampler(String(b["base_model"] ?? path), pathDir(path, "create_sampling_session.model_path"), String(path)) : await newSampler(String(b["base_model"]), baseDir(b["base_model"], "create_sampling_session.base_model"), null);
    return { type: "create_sampling_session", sampling_session_id: s.id };
  });
  app.get<{ Params: { id: string } }>("/api/v1/samplers/:id", async (req) => {
    const s = samplers.get(req.params.id);
    if (!s) throw new UserError(`no sampler "${req.params.id}"`);
    return { sampler_id: s.id, base_model: s.baseModel, model_path: s.modelPath };
  });
  app.post("/api/v1/asample", async (req) => {
    const b = body(req) as unknown as TinkerSampleRequest & { sampling_session_id?: string; seq_id?: number; model_path?: string; base_model?: string };
    let s = b.sampling_session_id ? samplers.get(b.sampling_session_id) : undefined;
    if (b.sampling_session_id && !s) throw new UserError(`asample: no sampling session "${b.sampling_session_id}"`);
    const n = b.num_samples ?? 1;
    if (!Number.isInteger(n) || n < 1) throw new UserError("asample.num_samples must be a positive integer");
    const seed = b.sampling_params?.seed ?? seedCounter++;
    // A retry of a sampling session's request (same seq_id) gets the first one's future and ids.
    const key = b.sampling_session_id && Number.isInteger(b.seq_id) ? `${b.sampling_session_id}/${String(b.seq_id)}/asample` : undefined;
    const ids = (key && sampleIds.get(key)) || Array.from({ length: n }, () => `seq-${randomUUID().slice(0, 12)}`);
    if (key) sampleIds.set(key, ids);
    if (sampleIds.size > 10_000) sampleIds.delete(sampleIds.keys().next().value!);
    const request_id = futures.submit(async () => {
      if (!s) s = b.model_path ? await newSampler(String(b.base_model ?? b.model_path), pathDir(b.model_path, "asample.model_path"), b.model_path) : await newSampler(String(b.base_model), baseDir(b.base_model, "asample.base_model"), null);
      const r = await sampleTinker(s.engine, s.tokenizer, b, seed);
      const json = {
        type: "sample",
        sequences: r.sequences.map((q) => ({ stop_reason: q.stopReason, tokens: Array.from(q.tokens), logprobs: Array.from(q.logprobs) })),
        prompt_logprobs: r.promptLogprobs ? Array.from(r.promptLogprobs, (v) => (Number.isNaN(v) ? null : v)) : null,
      };
      return { json, proto: encodeSampleResponse(r.sequences, r.promptLogprobs) };
    }, key);
    return { request_id, sample_sequence_ids: ids };
  });

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
      for (const e of engines) await e.close();
    },
  };
}

/** Total bytes of the files in `dir` (one level). */
async function dirSize(dir: string): Promise<number> {
  let n = 0;
  for (const f of await readdir(dir)) n += (await stat(join(dir, f))).size;
  return n;
}

/** A float32 TensorData in the SDK's JSON shape. */
function tensorJson(a: Float64Array) {
  return { data: Array.from(a, (v) => (Number.isNaN(v) ? null : v)), dtype: "float32", shape: [a.length] };
}
