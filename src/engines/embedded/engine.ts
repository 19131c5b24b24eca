/**
 * The embedded engine: an in-process Llama-family transformer on @jax-js/jax (Wasm on Node).
 * Zero setup; the default engine. Implements the contract in ../engine.ts.
 *
 * Forward → TypeScript cotangent → backward: the TypeScript loss computes c = dL/dlp (and
 * dL/dH) from `lp, H = tokenLogprobs(…)`; back-propagating (c, c_H) gives exactly the loss's
 * gradient, because the loss depends on the parameters only through lp and H. A batch that fits
 * one pass runs one forward under `vjp` — jax-js runs the jitted function's known part as one
 * jitted call that also returns the residuals, and the pullback as the jitted transpose — then
 * the pullback of (c, c_H): no second forward. Batches split into chunks run the jitted forward
 * per chunk, the loss, then `jit(grad(Σ c·lp + Σ c_H·H))` per chunk (a second forward), so no
 * chunk's residuals wait for the loss.
 *
 * Shapes are padded to buckets (batch to a power of two, length to a multiple of 4) because
 * every new shape costs a jit compilation.
 *
 * Memory (memory.ts): every pass is sized against jax-js's 4 GiB Wasm heap. A batch larger than
 * a pass may hold is split into power-of-two row chunks: forwardBackward scores every chunk,
 * calls the loss ONCE on the whole batch's scores (so whole-batch losses and their
 * normalisation are unchanged), then back-propagates each chunk's slice of the cotangents,
 * accumulating gradients. A model whose training state cannot fit is refused at load.
 */
import "./node-workers.ts"; // must precede @jax-js/jax: enables its worker threads on Node
import { numpy as np, jit, grad, vjp, tree, blockUntilReady, type OwnedFunction } from "@jax-js/jax";
import type {
  CheckpointRef,
  Engine,
  EngineInfo,
  LossReport,
  OptimStep,
  SampleRequest,
  SampleResult,
  TokenBatch,
  TokenLossFn,
  TokenScores,
} from "../engine.ts";
import { readHfConfig, type ModelConfig } from "./hf-config.ts";
import type { Tokenizer } from "../../tokenizers/types.ts";
import { decoder, lmHead, tokenLogprobs, type KvCache, type Params } from "./model.ts";
import { adamwUpdate, sumOfSquares, type Tensors } from "./optimizer.ts";
import { sampleToken } from "./sampling.ts";
import { ensureJax, jaxDevice } from "./runtime.ts";
import { assertFits, maxRows } from "./memory.ts";
import { Rng, hash32 } from "../../util/rng.ts";
import { initWeights, loadCheckpoint, saveCheckpoint, loadOptimizerState, paramsFromWeights, weightsFromParams } from "./checkpoint.ts";

const NEG = -1e9;
/** Training/scoring sequences are padded to a multiple of this many tokens (4 measured 8–11% faster per RL step than 8). */
const LEN_BUCKET = 4;

/** Smallest power of two >= n. */
function pow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}
/** n rounded up to a multiple of m. */
function roundUp(n: number, m: number): number {
  return Math.ceil(n / m) * m;
}

export interface EmbeddedEngineOptions {
  /** Seed for weight initialisation (random init only). */
  seed?: number;
  /** Tokenizer saved next to the weights by `save` (Hugging Face layout). */
  tokenizer?: Tokenizer;
  /**
   * Most sequences per jitted call when sampling (larger requests are chunked; the heap plan may
   * lower it). Default 512: on the quickstart model 512 rows × 4 tokens took 0.48 s in one call
   * against 0.56 s in four calls of 128 (same tokens; A/B interleaved, best of 3, loaded 2-core machine).
   */
  maxSampleBatch?: number;
  /** Model id shown in `info()`. */
  modelId?: string;
  /** Skip the load-time check that the training state fits jax-js's heap (inference-only use). */
  inferenceOnly?: boolean;
  /** Most sequences per training/scoring pass (default: planned from the heap, memory.ts). Tests use it to force splits. */
  maxPassRows?: number;
}

export class EmbeddedEngine implements Engine {
  private weights: Tensors;
  private reference: Tensors | null = null;
  private gradAcc: Tensors | null = null;
  private adam: { m: Tensors; v: Tensors; t: number } | null = null;
  private readonly invFreq: Float64Array;
  private readonly scoreFn;
  private readonly gradFn;
  private readonly prefillFn;
  private readonly decodeFn;

  private constructor(
    readonly config: ModelConfig,
    weights: Tensors,
    private readonly opts: EmbeddedEngineOptions,
  ) {
    this.weights = weights;
    const half = config.headDim / 2;
    this.invFreq = new Float64Array(half);
    for (let i = 0; i < half; i++) this.invFreq[i] = Math.pow(config.ropeTheta, (-2 * i) / config.headDim);
    const cfg = config;
    this.scoreFn = jit((p: Params, x0: np.Array, cos: np.Array, sin: np.Array, bias: np.Array, targets: np.Array) => {
      const { lp, ent } = tokenLogprobs(p, cfg, x0, cos, sin, bias, targets);
      return [lp, ent];
    });
    this.gradFn = jit(
      grad(
        (p: Params, x0: np.Array, cos: np.Array, sin: np.Array, bias: np.Array, targets: np.Array, cLp: np.Array, cEnt: np.Array) => {
          const { lp, ent } = tokenLogprobs(p, cfg, x0, cos, sin, bias, targets);
          return lp.mul(cLp).sum().add(ent.mul(cEnt).sum());
        },
        { argnums: [0, 1] },
      ),
    );
    // Prefill: the prompt step fills a new cache of `slots` slots (a static argument: one compile per cache length).
    this.prefillFn = jit(
      (p: Params, x0: np.Array, cos: np.Array, sin: np.Array, bias: np.Array, slots: number) => {
        const out = decoder(p, cfg, x0, cos, sin, bias, { slots });
        const last = out.hidden.slice([], -1); // [B, D]
        const logits = lmHead(p, last);
        return { logits, cache: out.cache! };
      },
      { staticArgnums: [5] },
    );
    this.decodeFn = jit((p: Params, x0: np.Array, cos: np.Array, sin: np.Array, bias: np.Array, cache: KvCache, write: np.Array) => {
      const out = decoder(p, cfg, x0, cos, sin, bias, { k: cache.k, v: cache.v, write });
      const last = out.hidden.slice([], -1); // [B, D]
      const logits = lmHead(p, last);
      return { logits, cache: out.cache! };
    });
  }

  /** A randomly initialised model (normal(0, 0.02) weights, unit norm gains). */
  static async create(config: ModelConfig, opts: EmbeddedEngineOptions = {}): Promise<EmbeddedEngine> {
    await ensureJax();
    if (!opts.inferenceOnly) assertFits(config);
    return new EmbeddedEngine(config, initWeights(config, opts.seed ?? 0), opts);
  }

  /** Load a Hugging Face-layout checkpoint directory (config.json + model.safetensors). */
  static async fromPretrained(dir: string, opts: EmbeddedEngineOptions = {}): Promise<EmbeddedEngine> {
    await ensureJax();
    if (!opts.inferenceOnly) assertFits(await readHfConfig(dir));
    const { config, weights } = await loadCheckpoint(dir);
    const engine = new EmbeddedEngine(config, weights, { modelId: dir, ...opts });
    engine.adam = await loadOptimizerState(dir);
    return engine;
  }

  info(): EngineInfo {
    let n = 0;
    for (const w of Object.values(this.weights)) n += w.size;
    return {
      engine: "embedded",
      modelId: this.opts.modelId ?? "random-init",
      vocabSize: this.config.vocabSize,
      maxSeqLen: this.config.maxPositionEmbeddings,
      numParams: n,
      device: jaxDevice(),
      dtype: "float32",
    };
  }

  // ---------------------------------------------------------------- inputs

  /** Rotary tables for positions [rows, S] → cos/sin [rows, S, 1, d/2]. */
  private rope(positions: Int32Array, rows: number, S: number): { cos: np.Array; sin: np.Array } {
    const half = this.config.headDim / 2;
    const c = new Float32Array(rows * S * half);
    const s = new Float32Array(rows * S * half);
    for (let i = 0; i < rows * S; i++) {
      const pos = positions[i]!;
      for (let j = 0; j < half; j++) {
        const a = pos * this.invFreq[j]!;
        c[i * half + j] = Math.cos(a);
        s[i * half + j] = Math.sin(a);
      }
    }
    return { cos: np.array(c).reshape([rows, S, 1, half]), sin: np.array(s).reshape([rows, S, 1, half]) };
  }

  /** Embeddings of token ids [rows, S] → [rows, S, D] (gather outside jit). */
  private embed(weights: Tensors, ids: Int32Array, rows: number, S: number): np.Array {
    const idx = np.array(ids, { dtype: np.int32 }).reshape([rows, S]);
    return np.take(weights["model.embed_tokens.weight"]!.ref, idx, 0);
  }

  /** Inputs of the full-sequence forward for `batch`, padded to buckets. */
  private trainInputs(weights: Tensors, batch: TokenBatch) {
    const { batchSize: B, seqLen: T, tokens, lengths } = batch;
    const V = this.config.vocabSize;
    const Bp = pow2(B);
    const Tp = roundUp(Math.max(T, 1), LEN_BUCKET);
    const ids = new Int32Array(Bp * Tp);
    const targets = new Float32Array(Bp * Tp * V);
    for (let b = 0; b < B; b++) {
      const len = Math.min(lengths[b]!, T);
      for (let t = 0; t < len; t++) {
        const id = tokens[b * T + t]!;
        if (id < 0 || id >= V) throw new Error(`token id ${id} at batch row ${b}, position ${t} is outside the vocabulary [0, ${V})`);
        ids[b * Tp + t] = id;
        if (t >= 1) targets[(b * Tp + t - 1) * V + id] = 1;
      }
    }
    const positions = new Int32Array(Tp).map((_, i) => i);
    const { cos, sin } = this.rope(positions, 1, Tp);
    const bias = new Float32Array(Tp * Tp);
    for (let i = 0; i < Tp; i++) for (let j = i + 1; j < Tp; j++) bias[i * Tp + j] = NEG;
    return {
      Bp,
      Tp,
      x0: this.embed(weights, ids, Bp, Tp),
      ids,
      cos,
      sin,
      bias: np.array(bias).reshape([1, 1, Tp, Tp]),
      targets: np.array(targets).reshape([Bp, Tp, V]),
    };
  }

  /** Shift padded predictions [Bp, Tp] (position t predicts t+1) to the contract layout [B*T]. */
  private unshift(pred: Float32Array, batch: TokenBatch, Tp: number): Float32Array {
    const { batchSize: B, seqLen: T, lengths } = batch;
    const out = new Float32Array(B * T);
    for (let b = 0; b < B; b++) {
      const len = Math.min(lengths[b]!, T);
      for (let t = 1; t < len; t++) out[b * T + t] = pred[b * Tp + t - 1]!;
    }
    return out;
  }

  /** Inverse of `unshift` for cotangents: [B*T] → padded [Bp, Tp]. */
  private shift(c: Float32Array | undefined, batch: TokenBatch, Bp: number, Tp: number): np.Array {
    const out = new Float32Array(Bp * Tp);
    if (c) {
      const { batchSize: B, seqLen: T, lengths } = batch;
      for (let b = 0; b < B; b++) {
        const len = Math.min(lengths[b]!, T);
        for (let t = 1; t < len; t++) out[b * Tp + t - 1] = c[b * T + t]!;
      }
    }
    return np.array(out).reshape([Bp, Tp]);
  }

  // ---------------------------------------------------------------- score / train

  /** Rows per training/scoring pass for sequences of `seqLen` tokens (memory.ts, or `maxPassRows`). */
  private passRows(kind: "train" | "score", seqLen: number): number {
    const planned = maxRows(this.config, kind, roundUp(Math.max(seqLen, 1), LEN_BUCKET));
    return Math.max(1, Math.min(planned, this.opts.maxPassRows ?? planned));
  }

  async score(batch: TokenBatch, opts: { model: "policy" | "reference"; entropy?: boolean }): Promise<TokenScores> {
    const weights = opts.model === "reference" ? this.reference : this.weights;
    if (!weights) throw new Error("score({model: 'reference'}) called before setReference()");
    const T = batch.seqLen;
    const logprobs = new Float32Array(batch.batchSize * T);
    const entropy = opts.entropy ? new Float32Array(batch.batchSize * T) : undefined;
    for (const [a, b] of rowChunks(batch.batchSize, this.passRows("score", T))) {
      const sub = sliceRows(batch, a, b);
      const inp = this.trainInputs(weights, sub);
      const [lp, ent] = this.scoreFn(paramsFromWeights(this.config, weights), inp.x0, inp.cos, inp.sin, inp.bias, inp.targets) as [np.Array, np.Array];
      logprobs.set(this.unshift((await lp.data()) as Float32Array, sub, inp.Tp), a * T);
      const entData = (await ent.data()) as Float32Array;
      if (entropy) entropy.set(this.unshift(entData, sub, inp.Tp), a * T);
    }
    return { logprobs, entropy };
  }

  /**
   * Scores `batch`, calls `loss` once on the whole batch's scores, back-propagates its cotangents.
   * A batch larger than one pass may hold (memory.ts) is scored and back-propagated in row chunks;
   * the gradient equals the unsplit pass's up to float32 summation order.
   */
  async forwardBackward(batch: TokenBatch, loss: TokenLossFn, opts: { entropy?: boolean } = {}): Promise<LossReport> {
    const T = batch.seqLen;
    const chunks = rowChunks(batch.batchSize, this.passRows("train", T));
    // One pass: vjp, no second forward. A/B interleaved (1 thread, loaded 2-core machine, best of
    // 2–3): 0.71× the two-call time at 256 × 4 (3.4M parameters, 256 × 12 tokens), 0.75× at 512 × 4
    // (13.6M, 64 × 12) once attention was token-major (model.ts); before that, the vjp path
    // measured 1.31× the two-call time at 3.4M and was kept to models up to 1M parameters.
    if (chunks.length === 1) return this.forwardBackwardOnce(batch, loss, opts);
    // Several chunks: score each chunk (no residuals kept), call the loss on the
    // whole batch, then back-propagate each chunk's cotangents with a jitted forward+backward.
    const logprobs = new Float32Array(batch.batchSize * T);
    const entropy = opts.entropy ? new Float32Array(batch.batchSize * T) : undefined;
    for (const [a, b] of chunks) {
      const sub = sliceRows(batch, a, b);
      const inp = this.trainInputs(this.weights, sub);
      const [lp, ent] = this.scoreFn(paramsFromWeights(this.config, this.weights), inp.x0, inp.cos, inp.sin, inp.bias, inp.targets) as [np.Array, np.Array];
      logprobs.set(this.unshift((await lp.data()) as Float32Array, sub, inp.Tp), a * T);
      const entData = (await ent.data()) as Float32Array;
      if (entropy) entropy.set(this.unshift(entData, sub, inp.Tp), a * T);
    }
    const scores: TokenScores = { logprobs };
    if (entropy) scores.entropy = entropy;
    const out = loss(scores, batch);
    if (!Number.isFinite(out.loss)) return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
    for (const [a, b] of chunks) {
      const sub = sliceRows(batch, a, b);
      const inp = this.trainInputs(this.weights, sub);
      const cLp = this.shift(out.dLogprobs.subarray(a * T, b * T), sub, inp.Bp, inp.Tp);
      const cEnt = this.shift(out.dEntropy?.subarray(a * T, b * T), sub, inp.Bp, inp.Tp);
      const [gParams, gX0] = this.gradFn(
        paramsFromWeights(this.config, this.weights),
        inp.x0,
        inp.cos,
        inp.sin,
        inp.bias,
        inp.targets,
        cLp,
        cEnt,
      ) as unknown as [Params, np.Array];
      await this.accumulate(gParams, gX0, inp.ids);
    }
    return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
  }

  /**
   * The batch in one pass: one forward (the jitted scoring function under `vjp`, which keeps its
   * residuals), the loss, then the pullback of its cotangents — no second forward.
   */
  private async forwardBackwardOnce(batch: TokenBatch, loss: TokenLossFn, opts: { entropy?: boolean }): Promise<LossReport> {
    const inp = this.trainInputs(this.weights, batch);
    const { cos, sin, bias, targets } = inp;
    const [[lp, ent], pullback] = vjp(
      (p: Params, x0: np.Array) => this.scoreFn(p, x0, cos.ref, sin.ref, bias.ref, targets.ref) as [np.Array, np.Array],
      [paramsFromWeights(this.config, this.weights), inp.x0],
    ) as unknown as [[np.Array, np.Array], OwnedFunction<(c: [np.Array, np.Array]) => [Params, np.Array]>];
    tree.dispose([cos, sin, bias, targets]);
    const scores: TokenScores = { logprobs: this.unshift((await lp.data()) as Float32Array, batch, inp.Tp) };
    const entData = (await ent.data()) as Float32Array;
    if (opts.entropy) scores.entropy = this.unshift(entData, batch, inp.Tp);
    const out = loss(scores, batch);
    if (Number.isFinite(out.loss)) {
      const cLp = this.shift(out.dLogprobs, batch, inp.Bp, inp.Tp);
      const cEnt = this.shift(out.dEntropy, batch, inp.Bp, inp.Tp);
      const [gParams, gX0] = pullback([cLp, cEnt]);
      await this.accumulate(gParams, gX0, inp.ids);
    }
    pullback.dispose();
    return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
  }

  /** Adds one pass's parameter gradients and dL/dx0 (scattered into the embedding rows `ids`) to `gradAcc`. Consumes both. */
  private async accumulate(gParams: Params, gX0: np.Array, ids: Int32Array): Promise<void> {
    const g = weightsFromParams(gParams);
    // Scatter-add dL/dx0 into the embedding gradient (the lookup ran outside jit).
    const D = this.config.hiddenSize;
    const dx = (await gX0.data()) as Float32Array;
    const embName = "model.embed_tokens.weight";
    const dEmb = new Float32Array(this.config.vocabSize * D);
    for (let r = 0; r < ids.length; r++) {
      const id = ids[r]!;
      const src = r * D;
      const dst = id * D;
      for (let j = 0; j < D; j++) dEmb[dst + j]! += dx[src + j]!;
    }
    g[embName] = g[embName]!.add(np.array(dEmb).reshape([this.config.vocabSize, D]));
    if (!this.gradAcc) this.gradAcc = g;
    else for (const k of Object.keys(g)) this.gradAcc[k] = this.gradAcc[k]!.add(g[k]!);
    // Run the additions now: pending operations keep their inputs alive, so without this a batch
    // split into many chunks held every chunk's gradients at once (a 54.6M model hit 4 GiB).
    await blockUntilReady(this.gradAcc);
  }

  async optimStep(opt: OptimStep): Promise<{ gradNorm: number; skipped: boolean }> {
    const grads = this.gradAcc;
    if (!grads) return { gradNorm: 0, skipped: true };
    this.gradAcc = null;
    const sq = sumOfSquares(tree.ref(grads));
    const gradNorm = Math.sqrt(((await sq.data()) as Float32Array)[0]!);
    if (!Number.isFinite(gradNorm)) {
      tree.dispose(grads);
      return { gradNorm, skipped: true };
    }
    if (!this.adam) {
      const zeros = (): Tensors => Object.fromEntries(Object.entries(this.weights).map(([k, w]) => [k, np.zeros(w.shape)]));
      this.adam = { m: zeros(), v: zeros(), t: 0 };
    }
    this.adam.t += 1;
    const b1 = opt.beta1 ?? 0.9;
    const b2 = opt.beta2 ?? 0.999;
    const scale = opt.maxGradNorm && gradNorm > opt.maxGradNorm ? opt.maxGradNorm / (gradNorm + 1e-6) : 1;
    const hyper = np.array(
      new Float32Array([opt.lr, b1, b2, opt.eps ?? 1e-8, opt.weightDecay ?? 0, 1 - Math.pow(b1, this.adam.t), 1 - Math.pow(b2, this.adam.t), scale]),
    );
    const out = adamwUpdate(this.weights, grads, this.adam.m, this.adam.v, hyper) as { w: Tensors; m: Tensors; v: Tensors };
    this.weights = out.w;
    this.adam.m = out.m;
    this.adam.v = out.v;
    return { gradNorm, skipped: false };
  }

  /** Drop accumulated gradients without stepping (e.g. after a non-finite loss). */
  zeroGrad(): void {
    if (this.gradAcc) tree.dispose(this.gradAcc);
    this.gradAcc = null;
  }

  async setReference(from: "policy" | CheckpointRef): Promise<void> {
    if (this.reference) tree.dispose(this.reference);
    if (from === "policy") {
      // A frozen copy: arrays are immutable in jax-js, so sharing references is a true snapshot.
      this.reference = tree.ref(this.weights);
    } else {
      this.reference = (await loadCheckpoint(from.dir)).weights;
    }
  }

  // ---------------------------------------------------------------- sampling

  async sample(req: SampleRequest): Promise<SampleResult[]> {
    const rows: { promptIndex: number; prompt: Int32Array; rng: Rng }[] = [];
    req.prompts.forEach((prompt, i) => {
      for (let j = 0; j < req.n; j++) rows.push({ promptIndex: i, prompt, rng: new Rng(hash32(req.seed, i, j)) });
    });
    // Rows per call: the option (default 512), lowered when the heap plan (memory.ts) says so.
    const longest = Math.max(1, ...req.prompts.map((p) => p.length));
    const planned = maxRows(this.config, "sample", roundUp(roundUp(longest, 4) + req.maxNewTokens, 16));
    const chunk = Math.max(1, Math.min(this.opts.maxSampleBatch ?? 512, planned));
    const results: SampleResult[] = [];
    for (let start = 0; start < rows.length; start += chunk) {
      results.push(...(await this.sampleRows(rows.slice(start, start + chunk), req)));
    }
    return results;
  }

  private async sampleRows(rows: { promptIndex: number; prompt: Int32Array; rng: Rng }[], req: SampleRequest): Promise<SampleResult[]> {
    const cfg = this.config;
    const V = cfg.vocabSize;
    const R = rows.length;
    const Bp = pow2(R);
    const maxPrompt = Math.max(1, ...rows.map((r) => r.prompt.length));
    const P = roundUp(maxPrompt, 4);
    const Tc = roundUp(P + req.maxNewTokens, 16);
    if (P + req.maxNewTokens > cfg.maxPositionEmbeddings) {
      throw new Error(`prompt (${maxPrompt} tokens, padded to ${P}) + maxNewTokens (${req.maxNewTokens}) exceeds the model's maxPositionEmbeddings ${cfg.maxPositionEmbeddings}; lower maxNewTokens to ${Math.max(0, cfg.maxPositionEmbeddings - P)} or less`);
    }
    const stop = new Set(req.stopTokens ?? []);
    // Left-pad prompts to P. pad[b] = number of pad slots in row b.
    const pad = new Int32Array(Bp);
    const ids = new Int32Array(Bp * P);
    const positions = new Int32Array(Bp * P);
    for (let b = 0; b < Bp; b++) {
      const prompt = b < R ? rows[b]!.prompt : rows[0]!.prompt;
      pad[b] = P - prompt.length;
      for (let t = 0; t < P; t++) {
        const k = t - pad[b]!;
        ids[b * P + t] = k >= 0 ? prompt[k]! : 0;
        positions[b * P + t] = Math.max(0, k);
      }
    }
    let cache: KvCache | null = null;
    const out = rows.map(() => ({ tokens: [] as number[], logprobs: [] as number[], done: false, reason: "max_tokens" as SampleResult["stopReason"] }));
    // Step 0 (prefill) runs the P prompt positions and fills cache slots 0..P−1; step s ≥ 1
    // decodes one position into slot P + s − 1, attending over all Tc slots.
    let S = P;
    let stepIds = ids;
    let stepPos = positions;
    // (No call after the last token: its logits would go unused.)
    for (let step = 0; step < req.maxNewTokens; step++) {
      const first = step === 0;
      const base = first ? 0 : P + step - 1; // slot of the first query in this step
      const Tk = first ? P : Tc;
      const bias = new Float32Array(Bp * S * Tk).fill(NEG);
      for (let b = 0; b < Bp; b++)
        for (let s = 0; s < S; s++) for (let j = pad[b]!; j <= base + s; j++) bias[(b * S + s) * Tk + j] = 0;
      const { cos, sin } = this.rope(stepPos, Bp, S);
      const x0 = this.embed(this.weights, stepIds, Bp, S);
      const biasArr = np.array(bias).reshape([Bp, 1, S, Tk]);
      let res: { logits: np.Array; cache: KvCache };
      if (first || !cache) {
        res = this.prefillFn(paramsFromWeights(cfg, this.weights), x0, cos, sin, biasArr, Tc) as { logits: np.Array; cache: KvCache };
      } else {
        const write = new Float32Array(Tc);
        write[base] = 1;
        res = this.decodeFn(paramsFromWeights(cfg, this.weights), x0, cos, sin, biasArr, cache, np.array(write).reshape([1, Tc, 1, 1])) as {
          logits: np.Array;
          cache: KvCache;
        };
      }
      cache = res.cache;
      const logits = (await res.logits.data()) as Float32Array;
      const nextIds = new Int32Array(Bp);
      const nextPos = new Int32Array(Bp);
      let alive = 0;
      for (let b = 0; b < R; b++) {
        const o = out[b]!;
        if (!o.done) {
          const { token, logprob } = sampleToken(logits, b * V, V, { temperature: req.temperature, topK: req.topK, topP: req.topP }, rows[b]!.rng);
          o.tokens.push(token);
          o.logprobs.push(logprob);
          if (stop.has(token)) {
            o.done = true;
            o.reason = "completed";
          } else alive++;
          nextIds[b] = token;
        }
        nextPos[b] = P + step - pad[b]!;
      }
      if (alive === 0) break;
      S = 1;
      stepIds = nextIds;
      stepPos = nextPos;
    }
    if (cache) tree.dispose(cache);
    return rows.map((r, b) => ({
      promptIndex: r.promptIndex,
      tokens: Int32Array.from(out[b]!.tokens),
      logprobs: Float32Array.from(out[b]!.logprobs),
      stopReason: out[b]!.reason,
    }));
  }

  // ---------------------------------------------------------------- inspection (tests, tools)

  /** Names and shapes (Hugging Face layout, [out, in]) of all weights. */
  weightNames(): string[] {
    return Object.keys(this.weights).sort();
  }

  /** A copy of weight `name` in the Hugging Face layout ([out, in] for linear weights). */
  async getWeight(name: string): Promise<Float32Array> {
    return exportTensor(this.weights, name);
  }

  /** Overwrite weight `name` from data in the Hugging Face layout. */
  setWeight(name: string, data: Float32Array): void {
    const old = this.weights[name];
    if (!old) throw new Error(`no weight named ${name}`);
    const shape = old.shape;
    const internal = shape.length === 2 && name !== "model.embed_tokens.weight" ? transposeCopy(data, shape[1]!, shape[0]!) : data;
    if (internal.length !== old.size) throw new Error(`setWeight(${name}): expected ${old.size} values, got ${data.length}`);
    this.weights[name] = np.array(Float32Array.from(internal)).reshape(shape);
    old.dispose();
  }

  /** A copy of the accumulated gradient of `name` (HF layout), or null before any forwardBackward. */
  async getGrad(name: string): Promise<Float32Array | null> {
    return this.gradAcc ? exportTensor(this.gradAcc, name) : null;
  }

  // ---------------------------------------------------------------- I/O

  async save(dir: string, opts: { optimizer?: boolean } = {}): Promise<void> {
    await saveCheckpoint(dir, this.config, this.weights, opts.optimizer ? this.adam : null, this.opts.tokenizer);
  }

  async load(dir: string): Promise<void> {
    const { config, weights } = await loadCheckpoint(dir);
    for (const k of ["vocabSize", "hiddenSize", "numLayers", "numHeads", "numKvHeads", "intermediateSize"] as const) {
      if (config[k] !== this.config[k]) throw new Error(`checkpoint ${dir} has ${k} ${config[k]}, the engine's model has ${this.config[k]}`);
    }
    tree.dispose(this.weights);
    this.weights = weights;
    if (this.adam) tree.dispose([this.adam.m, this.adam.v]);
    this.adam = await loadOptimizerState(dir);
    this.zeroGrad();
  }

  async close(): Promise<void> {
    tree.dispose(this.weights);
    if (this.reference) tree.dispose(this.reference);
    if (this.adam) tree.dispose([this.adam.m, this.adam.v]);
    this.zeroGrad();
    this.weights = {};
    this.reference = null;
    this.adam = null;
  }
}

/** Copy of a named tensor in the HF layout (transposing internal [in, out] linear weights). */
async function exportTensor(t: Tensors, name: string): Promise<Float32Array> {
  const a = t[name];
  if (!a) throw new Error(`no tensor named ${name}`);
  const data = (await a.ref.data()) as Float32Array;
  const shape = a.shape;
  return shape.length === 2 && name !== "model.embed_tokens.weight" ? transposeCopy(data, shape[0]!, shape[1]!) : Float32Array.from(data);
}

/** Transpose a row-major [rows, cols] matrix. */
function transposeCopy(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c]!;
  return out;
}

/** [from, to) row ranges of at most `size` rows covering [0, n). */
function rowChunks(n: number, size: number): [number, number][] {
  const out: [number, number][] = [];
  for (let a = 0; a < n; a += size) out.push([a, Math.min(n, a + size)]);
  return out.length ? out : [[0, 0]];
}

/** Rows [from, to) of a batch: the fields the engine reads (tokens, lengths, lossMask), same seqLen. */
function sliceRows(batch: TokenBatch, from: number, to: number): TokenBatch {
  const T = batch.seqLen;
  return {
    batchSize: to - from,
    seqLen: T,
    tokens: batch.tokens.subarray(from * T, to * T),
    lengths: batch.lengths.subarray(from, to),
    lossMask: batch.lossMask.subarray(from * T, to * T),
  };
}

function countTokens(batch: TokenBatch): number {
  let n = 0;
  for (let i = 0; i < batch.lossMask.length; i++) n += batch.lossMask[i]!;
  return n;
}
