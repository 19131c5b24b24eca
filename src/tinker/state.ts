/**
 * The state of one Tinker server: sessions, training models (each its own engine and optimizer),
 * sampling sessions, futures, and the checkpoint directory; plus the checks every route shares
 * (model names, tinker:// paths, checkpoint names). Routes live in routes/*.ts.
 */
import { existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import type { Engine } from "../core/engine.ts";
import { openEngine } from "../engines/open.ts";
import { EmbeddedEngine } from "../engines/embedded/engine.ts";
import { TorchEngine } from "../engines/torch/engine.ts";
import { isModelDir, LORA_HEAD_MODULE, loraConfigSchema, readAdapterInfo, type LoraConfig as EngineLora } from "../engines/lora.ts";
import { tinkerTokenizer } from "./ids-tokenizer.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { FutureStore, SeqQueue, UserError, type FutureResult } from "./futures.ts";

/** create_model's lora_config (tinker/types/lora_config.py; train_* default true as there). */
export interface LoraConfig {
  rank: number;
  seed?: number | null;
  train_unembed?: boolean;
  train_mlp?: boolean;
  train_attn?: boolean;
}

/**
 * Tinker's LoRA alpha: a fixed 32, so the update is scaled by 32/rank and the learning rate that
 * works is about the same at every rank ("LoRA Without Regret", Schulman et al. 2025, whose
 * setup Tinker serves). AdamParams.learning_rate applies to the adapters as given.
 */
export const TINKER_LORA_ALPHA = 32;

/**
 * Tinker's lora_config as the engines' `model.lora`: train_attn → q/k/v/o_proj, train_mlp →
 * gate/up/down_proj, train_unembed → lm_head; alpha 32, no dropout.
 * @throws UserError naming the field when rank is not a positive integer, a train_* is not a boolean, or none is set
 */
export function engineLora(c: LoraConfig): EngineLora {
  if (!Number.isInteger(c.rank) || c.rank < 1) throw new UserError("create_model.lora_config.rank must be a positive integer");
  const flag = (k: "train_attn" | "train_mlp" | "train_unembed") => {
    const v = c[k] ?? true;
    if (typeof v !== "boolean") throw new UserError(`create_model.lora_config.${k} must be true or false, got ${JSON.stringify(v)}`);
    return v;
  };
  const targets = [...(flag("train_attn") ? ["q_proj", "k_proj", "v_proj", "o_proj"] : []), ...(flag("train_mlp") ? ["gate_proj", "up_proj", "down_proj"] : []), ...(flag("train_unembed") ? [LORA_HEAD_MODULE] : [])];
  if (!targets.length) throw new UserError("create_model.lora_config: at least one of train_attn, train_mlp, train_unembed must be true");
  return loraConfigSchema.parse({ rank: c.rank, alpha: TINKER_LORA_ALPHA, dropout: 0, targets });
}

/** The Tinker lora_config an adapter's settings describe (the inverse of engineLora). */
function tinkerLoraOf(l: EngineLora): LoraConfig {
  return { rank: l.rank, train_attn: l.targets.includes("q_proj"), train_mlp: l.targets.includes("gate_proj"), train_unembed: l.targets.includes(LORA_HEAD_MODULE) };
}

/** A training client's model: its own engine (adapters or weights, gradients, AdamW state; under LoRA the frozen base is shared: one copy in-process (embedded) or one worker (torch)). */
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
  /** The weights' directory (a base model, a checkpoint or an adapter). */
  dir: string;
  engine: Engine;
  tokenizer: Tokenizer;
}

/** Checkpoint kinds: the tinker:// path segment → the SDK's checkpoint_type. */
export const CHECKPOINT_KINDS = { weights: "training", sampler_weights: "sampler", external_weights: "external" } as const;
export type CheckpointKind = keyof typeof CHECKPOINT_KINDS;

/** Sampling sessions whose engines stay loaded (an older one is released and reloaded on its next request). */
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
  /** Released sampling sessions (past MAX_SAMPLERS): what reopens each on its next request. */
  private readonly parked = new Map<string, { baseModel: string; dir: string; modelPath: string | null }>();
  /** Released sessions being reloaded (concurrent requests share one reload). */
  private readonly reloading = new Map<string, Promise<SamplingSession>>();
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
    if (!isModelDir(p)) throw new UserError(`${field}: ${p} is not a checkpoint directory (no config.json or adapter_config.json)`);
    return p;
  }

  /** The directory of checkpoint `<run>/<kind>/<name>` (each part checked). @throws UserError when absent. */
  checkpointDir(run: string, kind: string, name: string): string {
    if (!(kind in CHECKPOINT_KINDS) || [run, name].some((x) => !x || x.includes("/") || x === "." || x === "..")) throw new UserError(`no checkpoint tinker://${run}/${kind}/${name}`);
    const dir = join(this.dataDir, run, kind, name);
    if (!isModelDir(dir)) throw new UserError(`no checkpoint tinker://${run}/${kind}/${name}`);
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

  /**
   * An engine on `dir` (a base model or a checkpoint: full weights or a peft adapter), with LoRA
   * adapters when `lora` is given. A LoRA engine, or a sampler on a base or adapter, shares the
   * frozen base of a live LoRA engine on the same base instead of loading it again (shareBase: on
   * the embedded engine the same base arrays, on the torch engine another named adapter, or the
   * base with adapters disabled, in the same worker process).
   */
  private async open(dir: string, seed: number, lora: EngineLora | null): Promise<{ engine: Engine; tokenizer: Tokenizer }> {
    const tokenizer = await tinkerTokenizer(dir);
    const adapter = readAdapterInfo(dir);
    const base = this.sharedBase(adapter?.base ?? dir);
    let engine: Engine;
    if (base) this.log(`rlvr tinker: ${adapter ? `adapter ${dir}` : lora ? `a LoRA rank ${lora.rank} client` : "a base-model sampler"} shares the frozen base ${base.sharedBaseDir} already loaded (no copy)`);
    if (base && (lora || adapter)) {
      const e = await base.shareBase({ tokenizer, seed, lora: adapter?.lora ?? lora! });
      if (adapter) await e.load(dir);
      engine = e;
    } else if (base && !adapter) engine = await base.shareBase({ tokenizer, seed });
    else engine = await openEngine({ path: dir, engine: this.o.engine, ...(lora && !adapter ? { lora } : {}) }, { tokenizer, seed });
    this.engines.add(engine);
    return { engine, tokenizer };
  }

  /** A live engine of this server's kind whose frozen base is the model in `dir` (shareBase), if any. */
  private sharedBase(dir: string): EmbeddedEngine | TorchEngine | undefined {
    const want = resolve(dir);
    for (const e of this.engines) if ((e instanceof EmbeddedEngine || e instanceof TorchEngine) && e.sharedBaseDir === want) return e;
    return undefined;
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
    const { engine, tokenizer } = await this.open(dir, lora?.seed ?? this.o.seed, lora ? engineLora(lora) : null);
    const m: TrainingModel = { id, baseModel, dir, engine, tokenizer, lora, queue: new SeqQueue(), created: new Date(), lastRequest: new Date() };
    this.training.set(id, m);
    return m;
  }

  /** The Tinker lora_config of the adapter checkpoint in `dir`, or null for a full checkpoint. */
  adapterLora(dir: string): LoraConfig | null {
    const a = readAdapterInfo(dir);
    return a ? tinkerLoraOf(a.lora) : null;
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

  /**
   * A sampling session on the weights in `dir` (`id` given: a released session reopened). Past
   * MAX_SAMPLERS live sessions the oldest is released; its next request reopens it (sampler()).
   */
  async newSampler(baseModel: string, dir: string, modelPath: string | null, id = `sampler-${randomUUID().slice(0, 8)}`): Promise<SamplingSession> {
    const { engine, tokenizer } = await this.open(dir, this.o.seed, null);
    const s: SamplingSession = { id, baseModel, modelPath, dir, engine, tokenizer };
    this.parked.delete(id);
    this.samplers.set(s.id, s);
    for (const [oid, old] of this.samplers) {
      if (this.samplers.size <= MAX_SAMPLERS) break;
      this.samplers.delete(oid);
      this.parked.set(oid, { baseModel: old.baseModel, dir: old.dir, modelPath: old.modelPath });
      await this.release(old.engine);
    }
    return s;
  }

  /** Whether sampling session `id` was created here (loaded or released). */
  hasSampler(id: string): boolean {
    return this.samplers.has(id) || this.parked.has(id);
  }

  /** Sampling session `id`, reloaded from its weights when it was released. @throws UserError when there is none. */
  async sampler(id: string): Promise<SamplingSession> {
    const s = this.samplers.get(id);
    if (s) return s;
    const p = this.parked.get(id);
    if (!p) throw new UserError(`no sampling session "${id}"`);
    let pending = this.reloading.get(id);
    if (!pending) {
      this.log(`rlvr tinker: reloading released sampling session ${id} (${p.modelPath ?? p.baseModel})`);
      pending = this.newSampler(p.baseModel, p.dir, p.modelPath, id).finally(() => this.reloading.delete(id));
      this.reloading.set(id, pending);
    }
    return pending;
  }

  /** A sampling session's record without loading it: {baseModel, modelPath}. @throws UserError when there is none. */
  samplerInfo(id: string): { baseModel: string; modelPath: string | null } {
    const s = this.samplers.get(id) ?? this.parked.get(id);
    if (!s) throw new UserError(`no sampler "${id}"`);
    return { baseModel: s.baseModel, modelPath: s.modelPath };
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
