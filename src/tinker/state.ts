/**
 * The state of one Tinker server: sessions, training models (each its own engine and optimizer),
 * sampling sessions, futures, and the checkpoint directory; plus the checks every route shares
 * (model names, tinker:// paths, checkpoint names). Routes live in routes/*.ts.
 */
import { existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import type { Engine } from "../core/engine.ts";
import { openEngine } from "../engines/open.ts";
import { loadTokenizer } from "../tokenizers/index.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { FutureStore, SeqQueue, UserError, type FutureResult } from "./futures.ts";

/** create_model's lora_config (recorded; the engines train every weight, docs/tinker.md). */
export interface LoraConfig {
  rank: number;
  seed?: number;
  train_unembed?: boolean;
  train_mlp?: boolean;
  train_attn?: boolean;
}

/** A training client's model: its own engine (weights, gradients, AdamW state). */
export interface TrainingModel {
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

/** A sampling session: an engine holding a snapshot of weights. */
export interface SamplingSession {
  id: string;
  baseModel: string;
  modelPath: string | null;
  engine: Engine;
  tokenizer: Tokenizer;
}

/** Checkpoint kinds: the tinker:// path segment → the SDK's checkpoint_type. */
export const CHECKPOINT_KINDS = { weights: "training", sampler_weights: "sampler", external_weights: "external" } as const;
export type CheckpointKind = keyof typeof CHECKPOINT_KINDS;

/** Sampling sessions whose engines stay loaded (an older one answers "no sampling session"). */
const MAX_SAMPLERS = 8;

export interface TinkerStateOptions {
  models: Record<string, string>;
  dataDir: string;
  engine: "embedded" | "torch";
  seed: number;
  pollMs: number;
  log: (line: string) => void;
}

/** A JSON request body. @throws UserError when it is not an object. */
export function requestBody(req: { body: unknown }): Record<string, unknown> {
  if (!req.body || typeof req.body !== "object" || Array.isArray(req.body) || Buffer.isBuffer(req.body)) throw new UserError("the request body must be a JSON object");
  return req.body as Record<string, unknown>;
}

/** A checkpoint name (one path segment). @throws UserError naming the field. */
export function checkName(name: unknown, field: string): string {
  if (typeof name !== "string" || !/^[A-Za-z0-9._-]+$/.test(name) || name === "." || name === "..") throw new UserError(`${field} must be a name of letters, digits, '.', '_' or '-', got ${JSON.stringify(name)}`);
  return name;
}

export class TinkerState {
  readonly futures = new FutureStore();
  readonly sessions = new Map<string, { created: Date; lastHeartbeat: Date }>();
  readonly training = new Map<string, TrainingModel>();
  readonly samplers = new Map<string, SamplingSession>();
  /** Sequence ids handed out per sampling request key (a retry gets the same ones). */
  readonly sampleIds = new Map<string, string[]>();
  readonly models: Record<string, string>;
  readonly dataDir: string;
  readonly pollMs: number;
  readonly log: (line: string) => void;
  /** Seed of the next unseeded sampling request. */
  seedCounter: number;
  private readonly engines = new Set<Engine>();

  constructor(private readonly o: TinkerStateOptions) {
    this.models = o.models;
    this.dataDir = o.dataDir;
    this.pollMs = o.pollMs;
    this.log = o.log;
    this.seedCounter = o.seed;
  }

  /** A base model name or directory → its directory. @throws UserError naming the field. */
  baseDir(name: unknown, field: string): string {
    if (typeof name !== "string" || !name) throw new UserError(`${field} must be a model name or a local Hugging Face directory`);
    const dir = this.models[name] ?? name;
    if (!existsSync(join(dir, "config.json"))) throw new UserError(`${field}: "${name}" is neither a model this server registered (${Object.keys(this.models).join(", ") || "none"}) nor a local Hugging Face directory with config.json`);
    return dir;
  }

  /** A tinker:// path (or a local checkpoint directory) → its directory. @throws UserError naming the field. */
  pathDir(p: unknown, field: string): string {
    if (typeof p !== "string" || !p) throw new UserError(`${field} must be a tinker:// path or a local directory`);
    if (p.startsWith("tinker://")) {
      const parts = p.slice(9).split("/");
      if (parts.length !== 3) throw new UserError(`${field}: "${p}" is not tinker://<run>/<weights|sampler_weights|external_weights>/<name>`);
      return this.checkpointDir(parts[0]!, parts[1]!, parts[2]!);
    }
    if (!existsSync(join(p, "config.json"))) throw new UserError(`${field}: ${p} is not a checkpoint directory (no config.json)`);
    return p;
  }

  /** The directory of checkpoint `<run>/<kind>/<name>` (each part checked). @throws UserError when absent. */
  checkpointDir(run: string, kind: string, name: string): string {
    if (!(kind in CHECKPOINT_KINDS) || [run, name].some((x) => !x || x.includes("/") || x === "." || x === "..")) throw new UserError(`no checkpoint tinker://${run}/${kind}/${name}`);
    const dir = join(this.dataDir, run, kind, name);
    if (!existsSync(join(dir, "config.json"))) throw new UserError(`no checkpoint tinker://${run}/${kind}/${name}`);
    return dir;
  }

  /** The training model `id`. @throws UserError when there is none. */
  model(id: unknown): TrainingModel {
    const m = typeof id === "string" ? this.training.get(id) : undefined;
    if (!m) throw new UserError(`model_id: no training model "${String(id)}" on this server`);
    m.lastRequest = new Date();
    return m;
  }

  /** Run `fn` as the model's request `seq_id` (in order; a retry returns the first request's id). */
  submitTraining(route: string, body: Record<string, unknown>, fn: (m: TrainingModel) => Promise<FutureResult>): { request_id: string; model_id: string } {
    const m = this.model(body["model_id"]);
    const seq = body["seq_id"];
    if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0) throw new UserError(`${route}: seq_id must be a non-negative integer`);
    const id = this.futures.submit(() => m.queue.run(seq, () => fn(m)), `${m.id}/${seq}/${route}`);
    return { request_id: id, model_id: m.id };
  }

  private async open(dir: string, seed: number): Promise<{ engine: Engine; tokenizer: Tokenizer }> {
    const tokenizer = await loadTokenizer(dir);
    const engine = await openEngine({ path: dir, engine: this.o.engine }, { tokenizer, seed });
    this.engines.add(engine);
    return { engine, tokenizer };
  }

  private async release(engine: Engine): Promise<void> {
    this.engines.delete(engine);
    await engine.close();
  }

  /** A new training model; its id is the SDK's `<session_id>:train:<model_seq_id>` when both are given. */
  async createModel(body: Record<string, unknown>, dir: string, baseModel: string, lora: LoraConfig | null): Promise<TrainingModel> {
    const sid = body["session_id"];
    const mseq = body["model_seq_id"];
    const id = typeof sid === "string" && /^[A-Za-z0-9_-]+$/.test(sid) && Number.isInteger(mseq) ? `${sid}:train:${String(mseq)}` : `run-${randomUUID().slice(0, 8)}`;
    if (this.training.has(id)) throw new UserError(`model ${id} already exists (model_seq_id ${String(mseq)} reused in session ${String(sid)})`);
    const { engine, tokenizer } = await this.open(dir, lora?.seed ?? this.o.seed);
    const m: TrainingModel = { id, baseModel, dir, engine, tokenizer, lora, queue: new SeqQueue(), created: new Date(), lastRequest: new Date() };
    this.training.set(id, m);
    return m;
  }

  /** Forget a training model and release its engine. */
  async unload(m: TrainingModel): Promise<void> {
    this.training.delete(m.id);
    await this.release(m.engine);
  }

  /** Save the model as `tinker://<run>/<kind>/<name>`; returns that path. */
  async saveCheckpoint(m: TrainingModel, kind: CheckpointKind, name: string, optimizer: boolean): Promise<string> {
    await m.engine.save(join(this.dataDir, m.id, kind, name), { optimizer });
    return `tinker://${m.id}/${kind}/${name}`;
  }

  /** A sampling session on the weights in `dir`; the oldest sessions past MAX_SAMPLERS are released. */
  async newSampler(baseModel: string, dir: string, modelPath: string | null): Promise<SamplingSession> {
    const { engine, tokenizer } = await this.open(dir, this.o.seed);
    const s: SamplingSession = { id: `sampler-${randomUUID().slice(0, 8)}`, baseModel, modelPath, engine, tokenizer };
    this.samplers.set(s.id, s);
    for (const [id, old] of this.samplers) {
      if (this.samplers.size <= MAX_SAMPLERS) break;
      this.samplers.delete(id);
      await this.release(old.engine);
    }
    return s;
  }

  /** A training run in the SDK's TrainingRun shape. */
  runJson(m: TrainingModel) {
    return { training_run_id: m.id, base_model: m.baseModel, model_owner: "local", is_lora: m.lora !== null, lora_rank: m.lora?.rank ?? null, last_request_time: m.lastRequest.toISOString() };
  }

  /** The checkpoints of run `run` in the SDK's Checkpoint shape. */
  async listCheckpoints(run: string): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (const kind of Object.keys(CHECKPOINT_KINDS) as CheckpointKind[]) {
      const dir = join(this.dataDir, run, kind);
      if (!existsSync(dir)) continue;
      for (const name of (await readdir(dir)).sort()) {
        const st = await stat(join(dir, name));
        out.push({ checkpoint_id: `${kind}/${name}`, checkpoint_type: CHECKPOINT_KINDS[kind], time: st.mtime.toISOString(), tinker_path: `tinker://${run}/${kind}/${name}` });
      }
    }
    return out;
  }

  /** Release every engine. */
  async close(): Promise<void> {
    for (const e of [...this.engines]) await this.release(e);
  }
}
