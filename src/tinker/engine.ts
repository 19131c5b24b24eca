/**
 * `TinkerEngine`: rlvr's engine contract on a model held by a Tinker server (rlvr's own
 * `rlvr tinker`, or any server of the tinker 0.38 protocol), through the TypeScript client.
 *
 * - `score` is the server's `forward` (rows become datums: input tokens[0..len−1), targets
 *   tokens[1..len)). The protocol has no entropy, so `entropy` is never returned, even when asked:
 *   a loss that needs it fails naming it (the policy loss does when its entropy coefficient ≠ 0),
 *   and entropy metrics are absent.
 * - `forwardBackward` is `forward_backward_custom`: a forward gives the log-probs, the TypeScript
 *   loss gives dL/dlp, and a `cross_entropy` backward with weights −dL/dlp back-propagates it
 *   (the gradient of Σ −w·lp is −w). Gradients accumulate on the server until `optimStep`.
 * - `sample` uses a sampling client on a snapshot of the current weights, refreshed after each
 *   optimizer step.
 * - `setReference` saves the policy's state and opens a second training client on it (scored with
 *   `model: "reference"`). `save(dir)` saves the state on the server and writes a pointer file
 *   `tinker_state.json` in `dir`; `load(dir)` reads it back (weights and optimizer state).
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CheckpointRef, Engine, EngineInfo, LossReport, OptimStep, SampleRequest, SampleResult, TokenBatch, TokenLossFn, TokenScores } from "../core/engine.ts";
import { registerEngineKind, type OpenEngineOptions } from "../engines/open.ts";
import type { ModelSpec } from "../engines/open-kind.ts";
import { ServiceClient, type Datum, type SamplingClient, type TrainingClient } from "./client.ts";

export interface TinkerEngineOptions {
  /** The server, e.g. "http://127.0.0.1:8000". */
  baseUrl: string;
  apiKey?: string;
  /** The base model name the server knows (or a path it can load). */
  baseModel: string;
  /** LoRA rank asked of the server (default 32). */
  rank?: number;
  /** Vocabulary size of the model (the tokenizer's). */
  vocabSize: number;
  /** Longest sequence the model accepts (default 2048). */
  maxSeqLen?: number;
}

export class TinkerEngine implements Engine {
  private sampler: SamplingClient | null = null;
  private reference: TrainingClient | null = null;
  private refCount = 0;
  private saveCount = 0;

  private constructor(
    private readonly o: TinkerEngineOptions,
    private readonly service: ServiceClient,
    private policy: TrainingClient,
  ) {}

  /** Open a training client on the server. @throws TinkerRequestError when the server refuses. */
  static async open(o: TinkerEngineOptions): Promise<TinkerEngine> {
    const service = new ServiceClient({ baseUrl: o.baseUrl, apiKey: o.apiKey });
    const policy = await service.createLoraTrainingClient({ baseModel: o.baseModel, rank: o.rank ?? 32 });
    return new TinkerEngine(o, service, policy);
  }

  info(): EngineInfo {
    return { engine: "tinker", modelId: `${this.o.baseModel} @ ${this.o.baseUrl}`, vocabSize: this.o.vocabSize, maxSeqLen: this.o.maxSeqLen ?? 2048, numParams: 0, device: this.o.baseUrl, dtype: "remote" };
  }

  async sample(req: SampleRequest): Promise<SampleResult[]> {
    this.sampler ??= await this.policy.saveWeightsAndGetSamplingClient();
    const s = this.sampler;
    const per = await Promise.all(
      req.prompts.map((p, i) =>
        s.sample(Array.from(p), req.n, { maxTokens: req.maxNewTokens, temperature: req.temperature, topK: req.topK ?? 0, topP: req.topP ?? 1, seed: req.seed + i, stop: req.stopTokens ?? [] }),
      ),
    );
    return per.flatMap((r, i) =>
      r.sequences.map((q) => ({ promptIndex: i, tokens: Int32Array.from(q.tokens), logprobs: Float32Array.from(q.logprobs ?? []), stopReason: q.stopReason === "stop" ? ("completed" as const) : ("max_tokens" as const) })),
    );
  }

  /** Rows of `batch` as datums (targets = the next tokens), with `weights` per target when given. */
  private datums(batch: TokenBatch, weights?: (b: number, t: number) => number): Datum[] {
    const T = batch.seqLen;
    return Array.from({ length: batch.batchSize }, (_, b) => {
      const len = batch.lengths[b]!;
      if (len < 2) throw new Error(`tinker engine: row ${b} has ${len} token(s); a row needs at least 2 to be scored`);
      const row = Array.from(batch.tokens.subarray(b * T, b * T + len));
      return { modelInput: row.slice(0, -1), lossFnInputs: { target_tokens: row.slice(1), weights: Array.from({ length: len - 1 }, (_, i) => (weights ? weights(b, i + 1) : 0)) } };
    });
  }

  /** The server's log-probs laid out as the engine contract wants ([B*T], 0 at t = 0 and on padding). */
  private layout(batch: TokenBatch, outputs: Record<string, Float32Array>[]): Float32Array {
    const T = batch.seqLen;
    const lp = new Float32Array(batch.batchSize * T);
    outputs.forEach((o, b) => o["logprobs"]!.forEach((v, i) => (lp[b * T + i + 1] = v)));
    return lp;
  }

  async score(batch: TokenBatch, opts: { model: "policy" | "reference"; entropy?: boolean }): Promise<TokenScores> {
    const client = opts.model === "reference" ? this.reference : this.policy;
    if (!client) throw new Error("tinker engine: no reference model; call setReference first");
    const out = await client.forward(this.datums(batch), "cross_entropy");
    return { logprobs: this.layout(batch, out.lossFnOutputs) };
  }

  async forwardBackward(batch: TokenBatch, loss: TokenLossFn): Promise<LossReport> {
    const scores = await this.score(batch, { model: "policy" });
    const res = loss(scores, batch);
    const T = batch.seqLen;
    await this.policy.forwardBackward(this.datums(batch, (b, t) => -res.dLogprobs[b * T + t]!), "cross_entropy");
    let tokens = 0;
    for (const m of batch.lossMask) if (m > 0) tokens++;
    return { loss: res.loss, metrics: res.metrics, tokens };
  }

  async optimStep(opt: OptimStep): Promise<{ gradNorm: number; skipped: boolean }> {
    const r = await this.policy.optimStep({ learningRate: opt.lr, beta1: opt.beta1, beta2: opt.beta2, eps: opt.eps, weightDecay: opt.weightDecay, gradClipNorm: opt.maxGradNorm });
    this.sampler = null;
    return { gradNorm: r.metrics["grad_norm"] ?? NaN, skipped: false };
  }

  async setReference(from: "policy" | CheckpointRef): Promise<void> {
    const path = from === "policy" ? await this.policy.saveState(`reference-${this.refCount++}`) : await this.pointer(from.dir);
    this.reference = await this.service.createTrainingClientFromState(path);
  }

  async save(dir: string, opts: { optimizer?: boolean } = {}): Promise<void> {
    const path = await this.policy.saveState(`rlvr-save-${this.saveCount++}`);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "tinker_state.json"), JSON.stringify({ baseUrl: this.o.baseUrl, baseModel: this.o.baseModel, path, optimizer: opts.optimizer ?? false }, null, 2) + "\n");
  }

  private async pointer(dir: string): Promise<string> {
    const file = join(dir, "tinker_state.json");
    let j: { path?: unknown };
    try {
      j = JSON.parse(await readFile(file, "utf8")) as { path?: unknown };
    } catch (e) {
      throw new Error(`tinker engine: ${file} is missing or not JSON (${(e as Error).message}); a tinker engine checkpoint is a pointer to a state on the server`);
    }
    if (typeof j.path !== "string") throw new Error(`tinker engine: ${file}: field "path" (a tinker:// path) is missing`);
    return j.path;
  }

  async load(dir: string): Promise<void> {
    await this.policy.loadState(await this.pointer(dir), { optimizer: true });
    this.sampler = null;
  }

  async close(): Promise<void> {
    await this.service.close();
  }
}

/**
 * `model.engine: tinker`: a LoRA training client on the Tinker API server of model.tinker, with the
 * tokenizer's vocabulary and the context length of model.path's config.json when there is one
 * (else 2048). Registered with openEngine (src/engines/open.ts) when this module loads.
 * @throws Error "config error at model.tinker…" naming the missing field
 */
export async function openTinkerEngine(model: ModelSpec, o: OpenEngineOptions): Promise<Engine> {
  const t = model.tinker;
  if (!t) throw new Error("config error at model.tinker: engine: tinker needs model.tinker.baseUrl (the Tinker server)");
  const baseModel = t.baseModel ?? model.path;
  if (!baseModel) throw new Error("config error at model.tinker.baseModel: name the server's base model (or set model.path)");
  const cfgFile = model.path ? join(model.path, "config.json") : "";
  const maxSeqLen = cfgFile && existsSync(cfgFile) ? Number((JSON.parse(readFileSync(cfgFile, "utf8")) as { max_position_embeddings?: number }).max_position_embeddings ?? 2048) : 2048;
  return TinkerEngine.open({ baseUrl: t.baseUrl, apiKey: t.apiKey, baseModel, rank: t.rank ?? 32, vocabSize: o.tokenizer.vocabSize, maxSeqLen });
}

registerEngineKind("tinker", openTinkerEngine);
