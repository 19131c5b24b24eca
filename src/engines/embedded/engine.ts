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
 * Shared prompts: when a batch's rows come in groups with the same prompt (a GRPO group; prefix.ts
 * finds them from the tokens), training and scoring run the shared positions once per group
 * (model.ts prefixTokenLogprobs), and sampling's prompt step runs each distinct prompt once.
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
} from "../../core/engine.ts";
import { readHfConfig, type ModelConfig } from "./hf-config.ts";
import type { Tokenizer } from "../../tokenizers/types.ts";
import {
  block,
  decoder,
  dense,
  headCotangentSum,
  headLogprobs,
  lmHead,
  prefixBlock,
  prefixTokenLogprobs,
  tokenLogprobs,
  type Adapter,
  type DecoderConfig,
  type KvCache,
  type LayerParams,
  type LoraModule,
  type Params,
} from "./model.ts";
import { loadOrt, nativeJit, ortReadable, OrtCache, OrtDecoder, OrtHeadGrad, ortWeights, type NativeJit, type OrtWeights } from "./ort-runtime.ts";
import { passLength, planSharedPrefix, pow2, prefixShift, prefixUnshift, roundUp, type PrefixPlan } from "./prefix.ts";
import { adamwUpdate, sumOfSquares, type Tensors } from "./optimizer.ts";
import { sampleToken } from "./sampling.ts";
import { ensureJax, jaxDevice, jaxThreads, withInlineKernels } from "./runtime.ts";
import { assertFits, maxRows, passBudget, passBytes, HEAD_CHUNK, type MemoryPlan } from "./memory.ts";
import { adapterParamCount, adapterSpecs, adaptersToDisk, attachAdapters, initAdapters, mergeAdapters, readAdapters, storeWeight, writeAdapters } from "./adapters.ts";
import { adapterTensorName, checkLoraTargets, checkSameAdapter, LLAMA_LINEAR_MODULES, LORA_HEAD_MODULE, readAdapterInfo, type LoraConfig } from "../lora.ts";
import { writeSafetensors } from "./safetensors.ts";
import { join, resolve } from "node:path";
import { Rng, hash32 } from "../../util/rng.ts";
import { checkpointFromFiles, initWeights, loadCheckpoint, saveCheckpoint, loadOptimizerState, paramsFromWeights, weightsFromParams } from "./checkpoint.ts";
import { hfConfigFromFiles, type ModelFiles } from "./hf-config.ts";

/** The forward of one pass: its log-probs and entropies (model.ts tokenLogprobs / prefixTokenLogprobs). */
type PassScore = (p: Params, xs: np.Array[], fixed: np.Array[]) => np.Array[];
/** The functions native training compiles for onnxruntime (`nativeFn`). */
type NativeFns = { pass: PassGrad; block: BlockGrad };
/** The gradient of Σ outputs · cotangents of one pass w.r.t. the parameters and the embedded inputs. */
type PassGrad = (p: Params, xs: np.Array[], fixed: np.Array[], cots: np.Array[]) => [Params, np.Array[]];
/** The gradient of Σ outputs · cotangents of one block (layer-by-layer LoRA) w.r.t. its adapters and its input. */
type BlockGrad = (ad: Partial<Record<LoraModule, Adapter>>, p: LayerParams, xs: np.Array[], fixed: np.Array[], cots: np.Array[]) => [Partial<Record<LoraModule, Adapter>>, np.Array[]];

/** A model to run: the (base) weights, and the LoRA adapters attached to them (null: none). */
type Source = { weights: Tensors; adapters: Tensors | null };

const NEG = -1e9;
/** Positions per call of the native head backward: its [rows, V] intermediates stay near 50 MB each on SmolLM2. */
const NATIVE_HEAD_ROWS = 256;

/** A jitted forward: (parameters, embedded inputs, fixed inputs) → per-position outputs. */
type Forward = (p: Params, xs: np.Array[], fixed: np.Array[]) => np.Array[];

/**
 * One training/scoring pass's inputs and layout maps. `full`: xs = [x0 [Bp, Tp, D]], fixed = [cos,
 * sin, bias], outputs [lp, ent] [Bp, Tp]. `prefix` (model.ts prefixTokenLogprobs): xs = [x0p
 * [U, P, D], x0s [U·n, S, D]], fixed = [cos, sin, biasP, biasS] (per stacked position), outputs
 * [lpP, entP, lpS, entS]. The targets (one-hot of `next`) are built only where a pass needs them
 * whole (`withTargets`); the layer-by-layer path builds them per head chunk.
 */
interface Pass {
  kind: "full" | "prefix";
  xs: np.Array[];
  fixed: np.Array[];
  /** Token ids [rows·len] of each entry of xs (for the embedding gradient's scatter-add). */
  ids: Int32Array[];
  /** Target token of every output position, flat in the stacked order (xs's positions in turn), −1: none. */
  next: Int32Array;
  /** Shape of the targets one-hot without its last axis V ([Bp, Tp] or [N]). */
  targetShape: number[];
  /** Shapes of the outputs (lp, ent, …), in order. */
  outShapes: number[][];
  /** The outputs' data → [logprobs, entropy] in the contract layout [B·T]. */
  unshift(outs: Float32Array[]): Float32Array[];
  /** Cotangents of logprobs and entropy [B·T] → one array per output, in the outputs' layout. */
  shift(cLp: Float32Array, cEnt: Float32Array | undefined): Float32Array[];
}

/** Per-output data of a pass → [lp, ent] flat in the stacked order (`Pass.next`'s). */
function flatOutputs(pass: Pass, outs: Float32Array[]): [Float32Array, Float32Array] {
  if (pass.kind === "full") return [outs[0]!, outs[1]!];
  const cat = (a: Float32Array, b: Float32Array) => {
    const out = new Float32Array(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return out;
  };
  return [cat(outs[0]!, outs[2]!), cat(outs[1]!, outs[3]!)];
}

/** Inverse of `flatOutputs`: flat [lp, ent] → per-output data. */
function splitOutputs(pass: Pass, lp: Float32Array, ent: Float32Array): Float32Array[] {
  if (pass.kind === "full") return [lp, ent];
  const UP = pass.outShapes[0]![0]! * pass.outShapes[0]![1]!;
  return [lp.subarray(0, UP), ent.subarray(0, UP), lp.subarray(UP), ent.subarray(UP)];
}
/** LoRA: the load-time memory check asks that one sequence of this many tokens trains (memory.ts assertFits). */
const LORA_CHECK_LEN = 16;
/** Training/scoring sequences are padded to a multiple of this many tokens (4 measured 8–11% faster per RL step than 8). */
const LEN_BUCKET = 4;


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
  /** Most sequences per training/scoring pass and per sampling prefill (default: planned from the heap, memory.ts). Tests use it to force splits. */
  maxPassRows?: number;
  /**
   * LoRA: train layer by layer (`loraForwardBackwardLayers`: block inputs kept, each block's
   * backward recomputed from its input, the head in chunks of positions). Default: when the batch
   * does not fit one pass (memory.ts). true/false force it (tests, A/B measurements).
   */
  layerwise?: boolean;
  /**
   * Run the prompt positions a group of rows shares once per group (prefix.ts; default true):
   * training and scoring of GRPO batches, and the prompt step of sampling. false runs every row's
   * every position (the reference for tests and A/B measurements).
   */
  sharedPrefix?: boolean;
  /**
   * LoRA: sample on a float32 copy of the base with the blocks' adapters merged in, made once per
   * sampling call (default true; `samplingParams`). false runs the adapters beside the (possibly
   * bfloat16) base at every token: the reference for tests and A/B measurements.
   */
  mergedSampling?: boolean;
  /**
   * Run the model on onnxruntime's native CPU kernels (ort-runtime.ts) instead of jax-js's
   * WebAssembly ones: sampling and scoring as hand-built decoder graphs (ort-graph.ts); training
   * as jax-js's own gradient programs translated to ONNX (ort-jaxpr.ts, `nativeJit`) — the
   * full-weight forward and backward, and under layer-by-layer LoRA each block's backward. Node
   * only; needs the optional package onnxruntime-node (an error names the fix when it is missing).
   * Default: RLVR_NATIVE_KERNELS=on/off, else off. Results agree with jax-js's to float32
   * rounding (tested: tokens for a seed, scores, every gradient), so runs follow other
   * trajectories after a few steps. Under LoRA the adapters run beside the frozen base.
   */
  nativeKernels?: boolean;
  /**
   * Train LoRA adapters (../lora.ts) on a frozen base instead of all weights: only the adapters
   * get gradients, a reference snapshot and AdamW state, and the base may be stored as packed
   * bfloat16 (`lora.baseDtype`), so a model too large to fine-tune fully fits the Wasm heap.
   * Targets must be Llama block modules; dropout must be 0.
   */
  lora?: LoraConfig;
}

/** Prompts left-padded to P: ids/positions [n·P], pad[b] = number of pad slots in row b. */
type LeftPadded = { ids: Int32Array; positions: Int32Array; pad: Int32Array };

function leftPad(prompts: (b: number) => Int32Array, n: number, P: number): LeftPadded {
  const pad = new Int32Array(n);
  const ids = new Int32Array(n * P);
  const positions = new Int32Array(n * P);
  for (let b = 0; b < n; b++) {
    const prompt = prompts(b);
    pad[b] = P - prompt.length;
    for (let t = 0; t < P; t++) {
      const k = t - pad[b]!;
      ids[b * P + t] = k >= 0 ? prompt[k]! : 0;
      positions[b * P + t] = Math.max(0, k);
    }
  }
  return { pad, ids, positions };
}

/** Causal mask of the prompt step over left-padded rows: [rows, 1, P, P], 0 = attend, NEG = masked. */
function promptBias(pad: Int32Array, P: number): Float32Array {
  const bias = new Float32Array(pad.length * P * P).fill(NEG);
  for (let b = 0; b < pad.length; b++) for (let s = 0; s < P; s++) for (let j = pad[b]!; j <= s; j++) bias[(b * P + s) * P + j] = 0;
  return bias;
}

/** Mask of a decode step: [rows, 1, 1, Tk], row b attends to key slots pad[b] … base. */
function decodeBias(pad: Int32Array, base: number, Tk: number): Float32Array {
  const bias = new Float32Array(pad.length * Tk).fill(NEG);
  for (let b = 0; b < pad.length; b++) for (let j = pad[b]!; j <= base; j++) bias[b * Tk + j] = 0;
  return bias;
}

/**
 * The model calls of one `sampleRows` call (jax-js or onnxruntime): `prompt` runs the Up distinct
 * prompts and returns their last-position logits [Up, V] (rows then take their prompt's cache by
 * `src`, unless `shared`: one row per prompt, in order); `next` decodes one position of each of the
 * Bp rows at step ≥ 1 and returns logits [Bp, V].
 */
interface DecodeSteps {
  prompt(prompt: LeftPadded, Up: number, src: Int32Array, shared: boolean): Promise<Float32Array>;
  next(ids: Int32Array, positions: Int32Array, step: number): Promise<Float32Array>;
  dispose(): void;
}

/** Native kernels asked for, onnxruntime-node missing: the one line that says how to fix it. */
const NO_ORT = "nativeKernels needs the optional package onnxruntime-node: install it with `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node` (skip: CPU only, no CUDA download), or turn it off (nativeKernels: false, RLVR_NATIVE_KERNELS=off)";

/** RLVR_NATIVE_KERNELS: "on" → true, "off" or unset → false (EmbeddedEngineOptions.nativeKernels). */
function nativeKernelsDefault(): boolean {
  const v = typeof process !== "undefined" ? process.env?.RLVR_NATIVE_KERNELS : undefined;
  if (v === undefined || v === "" || v === "off" || v === "0") return false;
  if (v === "on" || v === "1") return true;
  throw new Error(`RLVR_NATIVE_KERNELS=${v}: expected on or off`);
}

export class EmbeddedEngine implements Engine {
  /** All weights; under LoRA the frozen base (matrices possibly packed bfloat16, model.ts `dense`). */
  private weights: Tensors;
  /** LoRA: the trainable adapters (adapters.ts), null without LoRA. */
  private adapters: Tensors | null = null;
  /** The reference model's weights; under LoRA the reference adapters (the base is shared). */
  private reference: Tensors | null = null;
  /** LoRA: the base checkpoint directory adapter_config.json points at (null: random init, saved beside the adapter). */
  private baseDir: string | null = null;
  /** The base is never trained (LoRA, or a base-only view from shareBase): shareBase may share it. */
  private frozenBase = false;
  private readonly lora: LoraConfig | null;
  private readonly memoryPlan: MemoryPlan | undefined;
  private gradAcc: Tensors | null = null;
  private adam: { m: Tensors; v: Tensors; t: number } | null = null;
  private readonly invFreq: Float64Array;
  /** The decoder's config with the LoRA scale (model.ts DecoderConfig). */
  private readonly decoderConfig: DecoderConfig;
  /** The native decoder's onnxruntime sessions by mode, opened on first use (null: unavailable). */
  private ortDecoders: Partial<Record<"sample" | "states", Promise<OrtDecoder | null>>> = {};
  private ortHeadGrad: Promise<OrtHeadGrad | null> | undefined;
  /** Native kernels: host weights (`nativeWeights`): under LoRA the base for `baseVersion`, else the policy for `version`. */
  private ortBase: { version: number; weights: OrtWeights } | null = null;
  /** Bumped whenever the policy's weights change (optimStep, setWeight, load). */
  private version = 0;
  /** Bumped whenever the base weights change (setWeight, load). */
  private baseVersion = 0;
  private readonly passFns: Record<Pass["kind"], { score: PassScore; grad: PassGrad }>;
  /** The un-jitted gradients of a pass and of one block, for `nativeFn` (onnxruntime). */
  private readonly gradFns: Record<Pass["kind"], PassGrad>;
  private readonly blockGradFns: Record<Pass["kind"], BlockGrad>;
  /** Native training (`nativeFn`): those functions compiled for onnxruntime, per pass layout. */
  private nativeFns: { [K in keyof NativeFns]: Partial<Record<Pass["kind"], NativeJit<NativeFns[K]>>> } = { pass: {}, block: {} };
  /** One block of a pass (the layer-by-layer LoRA path): its forward, and the gradient of Σ outputs · cotangents w.r.t. its adapters and its input. */
  private readonly layerFns: Record<
    Pass["kind"],
    {
      forward: (p: LayerParams, xs: np.Array[], fixed: np.Array[]) => np.Array[];
      grad: BlockGrad;
    }
  >;
  /** The head over a chunk of positions x [M, D] with one-hot targets [M, V]: [lp, ent] [M], and the gradient of Σ cLp·lp + cEnt·ent w.r.t. x (and the head's adapter). */
  private readonly headFns: {
    score: (hp: Pick<Params, "embed" | "lmHead" | "norm" | "headLora">, x: np.Array, targets: np.Array) => np.Array[];
    grad: (x: np.Array, ad: Adapter | null, hp: Pick<Params, "embed" | "lmHead" | "norm">, targets: np.Array, cLp: np.Array, cEnt: np.Array) => [np.Array, Adapter | null];
  };
  private readonly prefillFn;
  private readonly decodeFn;
  /** Logits [1, T, V] of every position of one sequence (topLogprobs). */
  private readonly logitsFn;

  private constructor(
    readonly config: ModelConfig,
    weights: Tensors,
    private readonly opts: EmbeddedEngineOptions,
  ) {
    this.weights = weights;
    this.lora = opts.lora ?? null;
    const lora = this.lora;
    if (lora) {
      const bf16 = Object.values(weights).some((w) => w.dtype === np.uint32);
      this.memoryPlan = { baseBytesPerParam: bf16 ? 2 : 4, trainable: adapterParamCount(config, lora) };
    } else if (opts.inferenceOnly) {
      // Weights and a possible reference copy; no gradients or AdamW state (sizes sampling and scoring passes).
      this.memoryPlan = { baseBytesPerParam: 8, trainable: 0 };
    }
    const half = config.headDim / 2;
    this.invFreq = new Float64Array(half);
    for (let i = 0; i < half; i++) this.invFreq[i] = Math.pow(config.ropeTheta, (-2 * i) / config.headDim);
    const cfg: DecoderConfig = lora ? { ...config, loraScale: lora.alpha / lora.rank } : config;
    this.decoderConfig = cfg;
    const full: Forward = (p, [x0], [cos, sin, bias, targets]) => {
      const { lp, ent } = tokenLogprobs(p, cfg, x0!, cos!, sin!, bias!, targets!);
      return [lp, ent];
    };
    const prefix: Forward = (p, [x0p, x0s], [cos, sin, biasP, biasS, targets]) => {
      const r = prefixTokenLogprobs(p, cfg, { x0p: x0p!, x0s: x0s!, cos: cos!, sin: sin!, biasP: biasP!, biasS: biasS!, targets: targets! });
      return [r.lpP, r.entP, r.lpS, r.entS];
    };
    // Σ_i sum(outputs_i · cotangents_i): the scalar whose gradient back-propagates the cotangents.
    const cotangentSum = (outs: np.Array[], cots: np.Array[]) =>
      outs.reduce((acc: np.Array | null, out, i) => {
        const term = out.mul(cots[i]!).sum();
        return acc ? acc.add(term) : term;
      }, null)!;
    // grad of Σ_i outputs_i · cotangents_i with respect to the parameters and the embeddings
    // (jitted for jax-js; `nativeFn` compiles the same function for onnxruntime).
    const withGrad = (f: Forward) =>
      grad((p: Params, xs: np.Array[], fixed: np.Array[], cots: np.Array[]) => cotangentSum(f(p, xs, fixed), cots), { argnums: [0, 1] }) as unknown as PassGrad;
    this.gradFns = { full: withGrad(full), prefix: withGrad(prefix) };
    this.passFns = {
      full: { score: jit(full), grad: jit(this.gradFns.full) },
      prefix: { score: jit(prefix), grad: jit(this.gradFns.prefix) },
    };
    // Layer by layer (LoRA): one block of either layout; the state is shaped like the pass's xs.
    type Block = (p: LayerParams, xs: np.Array[], fixed: np.Array[]) => np.Array[];
    const fullBlock: Block = (p, [x], [cos, sin, bias]) => [block(p, cfg, x!, cos!, sin!, bias!)];
    const prefixLayer: Block = (p, [xp, xs], [cos, sin, biasP, biasS]) => {
      const [U, P, D] = xp!.shape as [number, number, number];
      const [R, S] = xs!.shape as [number, number];
      const x = np.concatenate([xp!.reshape([U * P, D]), xs!.reshape([R * S, D])], 0);
      const y = prefixBlock(p, cfg, x, { cos: cos!, sin: sin!, biasP: biasP!, biasS: biasS! }, { U, P, R, S });
      return [y.ref.slice([0, U * P]).reshape([U, P, D]), y.slice([U * P, U * P + R * S]).reshape([R, S, D])];
    };
    const blockGrad = (f: Block) =>
      grad((ad: Partial<Record<LoraModule, Adapter>>, p: LayerParams, xs: np.Array[], fixed: np.Array[], cots: np.Array[]) => cotangentSum(f({ ...p, lora: ad }, xs, fixed), cots), {
        argnums: [0, 2],
      }) as unknown as BlockGrad;
    this.blockGradFns = { full: blockGrad(fullBlock), prefix: blockGrad(prefixLayer) };
    this.layerFns = {
      full: { forward: jit(fullBlock), grad: jit(this.blockGradFns.full) },
      prefix: { forward: jit(prefixLayer), grad: jit(this.blockGradFns.prefix) },
    };
    type Head = Pick<Params, "embed" | "lmHead" | "norm" | "headLora">;
    const headSum = (hp: Head, x: np.Array, targets: np.Array, cLp: np.Array, cEnt: np.Array) => headCotangentSum(hp, cfg, x, targets, cLp, cEnt);
    const headAdapted = jit(grad((x: np.Array, ad: Adapter, hp: Head, t: np.Array, cLp: np.Array, cEnt: np.Array) => headSum({ ...hp, headLora: ad }, x, t, cLp, cEnt), { argnums: [0, 1] }));
    const headPlain = jit(grad((x: np.Array, hp: Head, t: np.Array, cLp: np.Array, cEnt: np.Array) => headSum(hp, x, t, cLp, cEnt)));
    this.headFns = {
      score: jit((hp: Head, x: np.Array, targets: np.Array) => {
        const { lp, ent } = headLogprobs(hp, cfg, x, targets);
        return [lp, ent];
      }),
      grad: (x, ad, hp, t, cLp, cEnt) => (ad ? (headAdapted(x, ad, hp, t, cLp, cEnt) as unknown as [np.Array, Adapter]) : [headPlain(x, hp, t, cLp, cEnt) as np.Array, null]),
    };
    // Prefill: the prompt step returns the logits of its last position and its keys/values (the prompt cache).
    this.prefillFn = jit((p: Params, x0: np.Array, cos: np.Array, sin: np.Array, bias: np.Array) => {
      const out = decoder(p, cfg, x0, cos, sin, bias, "prefill");
      const last = out.hidden.slice([], -1); // [B, D]
      const logits = lmHead(p, last, cfg.loraScale);
      return { logits, cache: out.cache! };
    });
    this.logitsFn = jit((p: Params, x0: np.Array, cos: np.Array, sin: np.Array, bias: np.Array) => lmHead(p, decoder(p, cfg, x0, cos, sin, bias, null).hidden, cfg.loraScale));
    // Decode: one position of every row through all layers; the prompt cache is read, the generated one returned updated.
    this.decodeFn = jit((p: Params, x0: np.Array, cos: np.Array, sin: np.Array, bias: np.Array, prompt: KvCache, gen: KvCache, write: np.Array) => {
      const out = decoder(p, cfg, x0, cos, sin, bias, { prompt, gen, write });
      const last = out.hidden.slice([], -1); // [B, D]
      const logits = lmHead(p, last, cfg.loraScale);
      return { logits, cache: out.cache! };
    });
  }

  /** A randomly initialised model (normal(0, 0.02) weights, unit norm gains). */
  static async create(config: ModelConfig, opts: EmbeddedEngineOptions = {}): Promise<EmbeddedEngine> {
    await ensureJax();
    const bf16 = EmbeddedEngine.planBase(config, opts);
    let weights = initWeights(config, opts.seed ?? 0);
    if (bf16) weights = await packWeights(weights);
    const engine = new EmbeddedEngine(config, weights, opts);
    if (opts.lora) engine.adapters = initAdapters(config, opts.lora, opts.seed ?? 0);
    return engine;
  }

  /**
   * Load a Hugging Face-layout checkpoint directory (config.json + model.safetensors), or a peft
   * LoRA adapter directory (adapter_config.json + adapter_model.safetensors): its base model with
   * the adapter attached and trainable (`opts.lora`, when given, must have the adapter's rank, alpha and targets).
   */
  static async fromPretrained(dir: string, opts: EmbeddedEngineOptions = {}): Promise<EmbeddedEngine> {
    await ensureJax();
    const adapter = readAdapterInfo(dir);
    if (adapter && opts.lora) checkSameAdapter(dir, adapter.lora, opts.lora);
    const lora = adapter ? { ...adapter.lora, ...(opts.lora ? { saveMerged: opts.lora.saveMerged, baseDtype: opts.lora.baseDtype } : {}) } : opts.lora;
    const baseDir = adapter?.base ?? dir;
    const o = { modelId: dir, ...opts, lora };
    const bf16 = EmbeddedEngine.planBase(await readHfConfig(baseDir), o);
    const { config, weights } = await loadCheckpoint(baseDir, { bf16 });
    const engine = new EmbeddedEngine(config, weights, o);
    if (lora) {
      engine.baseDir = resolve(baseDir);
      engine.frozenBase = true;
      engine.adapters = adapter ? await readAdapters(dir, config, lora) : initAdapters(config, lora, opts.seed ?? 0);
    }
    if (!lora || adapter) engine.adam = await loadOptimizerState(dir);
    return engine;
  }

  /**
   * `fromPretrained` from a model directory's files held in memory (a browser tab fetches them;
   * it has no file system): `files["config.json"]` and `files["model.safetensors"]`, bytes as on
   * disk. With `opts.lora` the base is frozen (bfloat16 under `baseDtype`, as `fromPretrained`) and
   * fresh adapters train; a peft adapter directory and optimizer.safetensors are not read from files.
   * @param where names the source in errors and is the default `modelId` (e.g. the model's URL)
   * @throws Error naming the file and field when a file is missing or invalid, or the model cannot fit (planBase)
   */
  static async fromFiles(files: ModelFiles, opts: EmbeddedEngineOptions & { where?: string } = {}): Promise<EmbeddedEngine> {
    await ensureJax();
    const { where = "<memory>", ...rest } = opts;
    if (files["adapter_config.json"]) throw new Error(`checkpoint error: ${where} is a LoRA adapter (adapter_config.json); EmbeddedEngine.fromFiles loads a full checkpoint (config.json + model.safetensors)`);
    const o = { modelId: where, ...rest };
    const bf16 = EmbeddedEngine.planBase(hfConfigFromFiles(files, where), o);
    const { config, weights } = checkpointFromFiles(files, { bf16, where });
    const engine = new EmbeddedEngine(config, weights, o);
    if (o.lora) {
      engine.frozenBase = true;
      engine.adapters = initAdapters(config, o.lora, o.seed ?? 0);
    }
    return engine;
  }

  /**
   * A second engine on this engine's frozen base, without copying it (multi-tenant LoRA): the new
   * engine holds references to the same base arrays (jax-js arrays are immutable, and a LoRA
   * engine never replaces its base), with its own adapters (`opts.lora`, initialised from
   * `opts.seed`), gradients, AdamW state and reference. Without `opts.lora` it is the base model
   * alone, for sampling and scoring (a KL reference). Closing either engine leaves the other's base intact.
   * @throws Error when this engine has no frozen base (it trains every weight), or on bad LoRA targets
   */
  shareBase(opts: EmbeddedEngineOptions = {}): EmbeddedEngine {
    if (!this.frozenBase) throw new Error("shareBase: this engine trains every weight, so it has no frozen base to share (open it with model.lora)");
    if (opts.lora) {
      checkLoraTargets(opts.lora.targets, [...LLAMA_LINEAR_MODULES, LORA_HEAD_MODULE]);
      if (opts.lora.dropout !== 0) throw new Error(`config error at model.lora.dropout: the embedded engine trains LoRA without dropout (got ${opts.lora.dropout}); set 0, or use model.engine: torch`);
    }
    const engine = new EmbeddedEngine(this.config, { ...tree.ref(this.weights) }, { ...this.opts, ...opts, modelId: opts.modelId ?? this.opts.modelId, inferenceOnly: opts.lora ? opts.inferenceOnly : true });
    engine.baseDir = this.baseDir;
    engine.frozenBase = true;
    if (opts.lora) engine.adapters = initAdapters(this.config, opts.lora, opts.seed ?? 0);
    return engine;
  }

  /** The directory of the frozen base this engine can share (shareBase), or null: it trains every weight, or its base is a random init. */
  get sharedBaseDir(): string | null {
    return this.frozenBase ? this.baseDir : null;
  }

  /**
   * Checks the LoRA settings (Llama block targets, no dropout) and that the model's training state
   * fits the heap (unless inference only), and decides the storage of a LoRA base: packed
   * bfloat16 when asked, or under "auto" when a float32 base leaves no room for a 64-token sequence.
   * @returns whether to store the base as bfloat16
   * @throws Error naming the model size and the way out when it cannot fit (also used by the memory plan, src/trainer/plan.ts)
   */
  static planBase(config: ModelConfig, opts: EmbeddedEngineOptions): boolean {
    const lora = opts.lora;
    if (!lora) {
      if (!opts.inferenceOnly) assertFits(config);
      return false;
    }
    checkLoraTargets(lora.targets, [...LLAMA_LINEAR_MODULES, LORA_HEAD_MODULE]);
    if (lora.dropout !== 0) throw new Error(`config error at model.lora.dropout: the embedded engine trains LoRA without dropout (got ${lora.dropout}); set 0, or use model.engine: torch`);
    const trainable = adapterParamCount(config, lora);
    const plan = (baseBytesPerParam: number) => ({ baseBytesPerParam, trainable });
    const check = (bytes: number) => {
      if (!opts.inferenceOnly) assertFits(config, LORA_CHECK_LEN, undefined, plan(bytes));
    };
    if (lora.baseDtype === "float32") {
      check(4);
      return false;
    }
    let f32Fits = true;
    try {
      // "auto": float32 only when a 64-token sequence trains beside it.
      assertFits(config, Math.min(config.maxPositionEmbeddings, 64), undefined, plan(4));
    } catch {
      f32Fits = false;
    }
    if (lora.baseDtype === "auto" && f32Fits) return false;
    check(2);
    return true;
  }

  info(): EngineInfo {
    let n = 0;
    for (const w of Object.values(this.adapters ?? this.weights)) n += w.size;
    const bf16 = this.memoryPlan?.baseBytesPerParam === 2;
    return {
      engine: "embedded",
      modelId: this.opts.modelId ?? "random-init",
      vocabSize: this.config.vocabSize,
      maxSeqLen: this.config.maxPositionEmbeddings,
      numParams: n,
      device: jaxDevice(),
      dtype: this.lora ? `float32 (LoRA rank ${this.lora.rank}; frozen base stored as ${bf16 ? "bfloat16" : "float32"})` : "float32",
    };
  }

  // ---------------------------------------------------------------- inputs

  /** Rotary tables for `n` positions → cos/sin [n · d/2] (host arrays). */
  private ropeTables(positions: Int32Array, n: number): { c: Float32Array; s: Float32Array } {
    const half = this.config.headDim / 2;
    const c = new Float32Array(n * half);
    const s = new Float32Array(n * half);
    for (let i = 0; i < n; i++) {
      const pos = positions[i]!;
      for (let j = 0; j < half; j++) {
        const a = pos * this.invFreq[j]!;
        c[i * half + j] = Math.cos(a);
        s[i * half + j] = Math.sin(a);
      }
    }
    return { c, s };
  }

  /** Rotary tables for positions [rows, S] → cos/sin [rows, S, 1, d/2]. */
  private rope(positions: Int32Array, rows: number, S: number): { cos: np.Array; sin: np.Array } {
    const half = this.config.headDim / 2;
    const { c, s } = this.ropeTables(positions, rows * S);
    return { cos: np.array(c).reshape([rows, S, 1, half]), sin: np.array(s).reshape([rows, S, 1, half]) };
  }

  /** Embeddings of token ids [rows, S] → [rows, S, D] (gather outside jit). */
  private embed(weights: Tensors, ids: Int32Array, rows: number, S: number): np.Array {
    const idx = np.array(ids, { dtype: np.int32 }).reshape([rows, S]);
    return dense(np.take(weights["model.embed_tokens.weight"]!.ref, idx, 0));
  }

  /** The parameter tree of `src` (new references), adapters attached. */
  private params(src: Source): Params {
    const p = paramsFromWeights(this.config, src.weights);
    return this.lora && src.adapters ? attachAdapters(p, this.config, this.lora, src.adapters) : p;
  }

  /**
   * The policy's parameters for sampling (no gradient): under LoRA the base unpacked to float32
   * with the blocks' adapters merged in, W + (alpha/rank)·A B (adapters.ts `mergeAdapters`), built
   * once per `sampleRows` call, so a decode step runs one matmul per weight instead of the
   * bfloat16 unpack plus two adapter matmuls per module at every token (docs/benchmarks.md,
   * "Merged LoRA sampling, synchronous dispatch, relaxed SIMD"). A head adapter stays attached (merging it would copy the tied
   * embedding). Without LoRA: `params`. Numerics: the unmerged forward's up to float32 rounding.
   * Costs one float32 copy of the base (memory.ts counts it in the "sample"/"prefill" passes).
   */
  private samplingParams(): Params {
    const lora = this.lora;
    if (!lora || !this.adapters || this.opts.mergedSampling === false) return this.params(this.policy);
    const blocks = { ...lora, targets: lora.targets.filter((t) => t !== LORA_HEAD_MODULE) };
    const merged = mergeAdapters(this.weights, this.config, blocks, this.adapters);
    const p = paramsFromWeights(this.config, merged);
    tree.dispose(merged);
    if (!lora.targets.includes(LORA_HEAD_MODULE)) return p;
    return attachAdapters(p, this.config, { ...lora, targets: [LORA_HEAD_MODULE] }, this.adapters);
  }

  /**
   * Native kernels: `src`'s weights as host arrays for onnxruntime (ort-runtime.ts `ortWeights`).
   * Under LoRA the frozen base is copied once (kept while `baseVersion` holds) and the adapters
   * are graph inputs of their own, copied per call (20 MB for SmolLM2 at rank 16); without LoRA
   * the policy's weights are kept for its `version`, so sampling and training one version copy them once.
   */
  private async nativeWeights(src: Source): Promise<OrtWeights[]> {
    const base = await this.nativeBase(src);
    if (!this.lora || !src.adapters) return [base];
    const p = this.params(src);
    try {
      return [base, await ortWeights(p, "adapters")];
    } finally {
      tree.dispose(p);
    }
  }

  /** `nativeWeights` without the LoRA factors: under LoRA the frozen base, else all of `src`'s weights. */
  private async nativeBase(src: Source): Promise<OrtWeights> {
    const lora = !!this.lora && !!src.adapters;
    const cacheable = lora || (src.weights === this.weights && src.adapters === this.adapters);
    const version = lora ? this.baseVersion : this.version;
    if (cacheable && this.ortBase?.version === version) return this.ortBase.weights;
    const p = paramsFromWeights(this.config, src.weights);
    let w: OrtWeights;
    try {
      w = await ortWeights(p, "base");
    } finally {
      tree.dispose(p);
    }
    if (cacheable) this.ortBase = { version, weights: w };
    return w;
  }

  /** The policy being trained. */
  private get policy(): Source {
    return { weights: this.weights, adapters: this.adapters };
  }

  /** One-hot targets [rows, len, V]: position t of row r is the one-hot of next(r, t) (−1: all zero). */
  private static oneHot(next: (r: number, t: number) => number, rows: number, len: number, V: number): np.Array {
    const out = new Float32Array(rows * len * V);
    for (let r = 0; r < rows; r++)
      for (let t = 0; t < len; t++) {
        const id = next(r, t);
        if (id >= 0) out[(r * len + t) * V + id] = 1;
      }
    return np.array(out).reshape([rows, len, V]);
  }

  /**
   * Causal additive mask [1, 1, S, Tk], Tk = Pre + S rounded up to LEN_BUCKET: query s sees the Pre
   * prefix slots and keys 0..s of its own S; slots past Pre + S are padding (model.ts `attend`).
   */
  private static causalBias(pre: number, S: number): np.Array {
    const Tk = roundUp(pre + S, LEN_BUCKET);
    const bias = new Float32Array(S * Tk);
    for (let i = 0; i < S; i++) for (let j = pre + i + 1; j < Tk; j++) bias[i * Tk + j] = NEG;
    return np.array(bias).reshape([1, 1, S, Tk]);
  }

  /**
   * The model inputs of one training/scoring pass over `batch`, padded to buckets (rows to a power
   * of two, length to a multiple of LEN_BUCKET): the full-sequence forward, or — when the rows come
   * in groups sharing their prompt (prefix.ts) — the shared-prefix forward, which runs each group's
   * shared positions once.
   */
  private passInputs(weights: Tensors, batch: TokenBatch): Pass {
    const { batchSize: B, seqLen: T, tokens, lengths } = batch;
    const V = this.config.vocabSize;
    for (let b = 0; b < B; b++) {
      const len = Math.min(lengths[b]!, T);
      for (let t = 0; t < len; t++) {
        const id = tokens[b * T + t]!;
        if (id < 0 || id >= V) throw new Error(`token id ${id} at batch row ${b}, position ${t} is outside the vocabulary [0, ${V})`);
      }
    }
    // Token t of row b, or −1 past the row's length / the batch.
    const tok = (b: number, t: number) => (b < B && t < Math.min(lengths[b]!, T) ? tokens[b * T + t]! : -1);
    const plan = this.opts.sharedPrefix === false ? null : planSharedPrefix(batch, LEN_BUCKET);
    return plan ? this.prefixPass(weights, batch, tok, plan) : this.fullPass(weights, batch, tok);
  }

  /** Every row's positions 0..Tp−1 (model.ts tokenLogprobs). `tok(b, t)`: token t of row b, −1 outside. */
  private fullPass(weights: Tensors, batch: TokenBatch, tok: (b: number, t: number) => number): Pass {
    const Tp = passLength(batch.seqLen, LEN_BUCKET);
    const Bp = pow2(batch.batchSize);
    const ids = Int32Array.from({ length: Bp * Tp }, (_, i) => Math.max(0, tok(Math.floor(i / Tp), i % Tp)));
    const { cos, sin } = this.rope(Int32Array.from({ length: Tp }, (_, i) => i), 1, Tp);
    return {
      kind: "full",
      xs: [this.embed(weights, ids, Bp, Tp)],
      fixed: [cos, sin, EmbeddedEngine.causalBias(0, Tp)],
      ids: [ids],
      next: Int32Array.from({ length: Bp * Tp }, (_, i) => tok(Math.floor(i / Tp), (i % Tp) + 1)),
      targetShape: [Bp, Tp],
      outShapes: [
        [Bp, Tp],
        [Bp, Tp],
      ],
      unshift: ([lp, ent]) => [this.unshift(lp!, batch, Tp), this.unshift(ent!, batch, Tp)],
      shift: (cLp, cEnt) => [this.shift(cLp, batch, Bp, Tp), this.shift(cEnt, batch, Bp, Tp)],
    };
  }

  /** Each group's shared positions 0..P−1 once, every row's P..P+S−1 (model.ts prefixTokenLogprobs). */
  private prefixPass(weights: Tensors, batch: TokenBatch, tok: (b: number, t: number) => number, plan: PrefixPlan): Pass {
    const { n, shared: P, rest: S } = plan;
    const U = pow2(batch.batchSize / n);
    // Positions stacked as rows: each group's 0..P−1 (read from its first row), then every row's P..P+S−1.
    const UP = U * P;
    const N = UP + U * n * S;
    const rowOf = (i: number) => (i < UP ? Math.floor(i / P) * n : Math.floor((i - UP) / S));
    const posOf = (i: number) => (i < UP ? i % P : P + ((i - UP) % S));
    const ids = Int32Array.from({ length: N }, (_, i) => Math.max(0, tok(rowOf(i), posOf(i))));
    const { cos, sin } = this.rope(Int32Array.from({ length: N }, (_, i) => posOf(i)), N, 1);
    const idsP = ids.slice(0, UP);
    const idsS = ids.slice(UP);
    return {
      kind: "prefix",
      xs: [this.embed(weights, idsP, U, P), this.embed(weights, idsS, U * n, S)],
      fixed: [cos, sin, EmbeddedEngine.causalBias(0, P), EmbeddedEngine.causalBias(P, S)],
      ids: [idsP, idsS],
      next: Int32Array.from({ length: N }, (_, i) => tok(rowOf(i), posOf(i) + 1)),
      targetShape: [N],
      outShapes: [
        [U, P],
        [U, P],
        [U * n, S],
        [U * n, S],
      ],
      unshift: ([lpP, entP, lpS, entS]) => [prefixUnshift(lpP!, lpS!, batch, plan), prefixUnshift(entP!, entS!, batch, plan)],
      shift: (cLp, cEnt) => {
        const l = prefixShift(cLp, batch, plan, U);
        const e = prefixShift(cEnt, batch, plan, U);
        return [l.pre, e.pre, l.rest, e.rest];
      },
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

  /** Inverse of `unshift` for cotangents: [B*T] → padded [Bp, Tp] (flat). */
  private shift(c: Float32Array | undefined, batch: TokenBatch, Bp: number, Tp: number): Float32Array {
    const out = new Float32Array(Bp * Tp);
    if (c) {
      const { batchSize: B, seqLen: T, lengths } = batch;
      for (let b = 0; b < B; b++) {
        const len = Math.min(lengths[b]!, T);
        for (let t = 1; t < len; t++) out[b * Tp + t - 1] = c[b * T + t]!;
      }
    }
    return out;
  }

  /** The pass's fixed inputs followed by its one-hot targets [...targetShape, V] (the whole-pass functions' last input). */
  private withTargets(pass: Pass): np.Array[] {
    const V = this.config.vocabSize;
    const t = EmbeddedEngine.oneHot((i) => pass.next[i]!, pass.next.length, 1, V);
    return [...pass.fixed, t.reshape([...pass.targetShape, V])];
  }

  /** Cotangents [B·T] → one array per output of the pass. */
  private static cotangents(pass: Pass, cLp: Float32Array, cEnt: Float32Array | undefined): np.Array[] {
    return pass.shift(cLp, cEnt).map((d, i) => np.array(d).reshape(pass.outShapes[i]!));
  }

  // ---------------------------------------------------------------- score / train

  /** Rows per training/scoring pass for sequences of `seqLen` tokens (memory.ts, or `maxPassRows`). */
  private passRows(kind: "train" | "score", seqLen: number): number {
    const planned = maxRows(this.config, kind, roundUp(Math.max(seqLen, 1), LEN_BUCKET), undefined, this.memoryPlan);
    return Math.max(1, Math.min(planned, this.opts.maxPassRows ?? planned));
  }

  /** Log-probs and entropies [B·T] of `batch` under `weights`, one jitted forward per row chunk. */
  private async forwardChunks(src: Source, batch: TokenBatch, chunks: [number, number][]): Promise<{ logprobs: Float32Array; entropy: Float32Array }> {
    const T = batch.seqLen;
    const logprobs = new Float32Array(batch.batchSize * T);
    const entropy = new Float32Array(batch.batchSize * T);
    for (const [a, b] of chunks) {
      const sub = sliceRows(batch, a, b);
      const pass = this.passInputs(src.weights, sub);
      const outs = this.passFns[pass.kind].score(this.params(src), pass.xs, this.withTargets(pass));
      const [lp, ent] = pass.unshift((await Promise.all(outs.map((o) => o.data()))) as Float32Array[]);
      logprobs.set(lp!, a * T);
      entropy.set(ent!, a * T);
    }
    return { logprobs, entropy };
  }

  async score(batch: TokenBatch, opts: { model: "policy" | "reference"; entropy?: boolean }): Promise<TokenScores> {
    const ref = this.reference && (this.lora ? { weights: this.weights, adapters: this.reference } : { weights: this.reference, adapters: null });
    const src = opts.model === "reference" ? ref : this.policy;
    if (!src) throw new Error("score({model: 'reference'}) called before setReference()");
    const chunks = rowChunks(batch.batchSize, this.passRows("score", batch.seqLen));
    // LoRA: a batch past one scoring pass scores layer by layer, in the shapes (and the heap's
    // free blocks) of the training step's forward; a scoring pass of 2 rows beside the training
    // step's blocks took the RL step past the heap.
    // Native kernels scores every batch on onnxruntime (`layerScores` → `nativeForward`).
    const { logprobs, entropy } = this.native || this.layerwise(chunks.length > 1) ? await this.layerScores(src, batch) : await this.forwardChunks(src, batch, chunks);
    return opts.entropy ? { logprobs, entropy } : { logprobs };
  }

  /** LoRA with block adapters, and the batch past one pass (or `layerwise` set): train and score layer by layer. */
  private layerwise(pastOnePass: boolean): boolean {
    const blockAdapters = this.lora?.targets.some((t) => t !== LORA_HEAD_MODULE) ?? false;
    return !!this.adapters && blockAdapters && (this.opts.layerwise ?? pastOnePass);
  }

  /** Row chunks of the layer-by-layer path (memory.ts "layers", at most `maxPassRows`). */
  private layerChunks(batch: TokenBatch): [number, number][] {
    const rows = maxRows(this.config, "layers", roundUp(Math.max(batch.seqLen, 1), LEN_BUCKET), undefined, this.memoryPlan);
    return rowChunks(batch.batchSize, Math.max(1, Math.min(rows, this.opts.maxPassRows ?? Infinity)));
  }

  /** Log-probs and entropies [B·T] under `src`, block by block (`layerForward`, `headScores`) per row chunk. */
  private async layerScores(src: Source, batch: TokenBatch): Promise<{ logprobs: Float32Array; entropy: Float32Array }> {
    const T = batch.seqLen;
    const logprobs = new Float32Array(batch.batchSize * T);
    const entropy = new Float32Array(batch.batchSize * T);
    for (const [a, b] of this.layerChunks(batch)) {
      const pass = this.passInputs(src.weights, sliceRows(batch, a, b));
      const { states, scores } = await this.forwardScores(pass, src, false);
      const [lp, ent] = pass.unshift(splitOutputs(pass, ...scores));
      tree.dispose([pass.fixed, states]);
      logprobs.set(lp!, a * T);
      entropy.set(ent!, a * T);
    }
    return { logprobs, entropy };
  }

  /**
   * Scores `batch`, calls `loss` once on the whole batch's scores, back-propagates its cotangents.
   * A batch larger than one pass may hold (memory.ts) is scored and back-propagated in row chunks;
   * under LoRA such a batch trains layer by layer (`loraForwardBackwardLayers`). The gradient equals
   * the unsplit pass's up to float32 summation order.
   */
  async forwardBackward(batch: TokenBatch, loss: TokenLossFn, opts: { entropy?: boolean } = {}): Promise<LossReport> {
    if (this.frozenBase && !this.adapters) throw new Error("forwardBackward: this engine is a base model shared with other engines (shareBase without LoRA); it samples and scores only");
    const T = batch.seqLen;
    const chunks = rowChunks(batch.batchSize, this.passRows("train", T));
    const fits = passBytes(this.config, "train", pow2(batch.batchSize), roundUp(Math.max(T, 1), LEN_BUCKET), this.memoryPlan) <= passBudget(this.config, undefined, this.memoryPlan);
    if (this.layerwise(chunks.length > 1 || !fits)) return this.loraForwardBackwardLayers(batch, loss, opts);
    if (this.native && !this.adapters) return this.nativeForwardBackward(batch, loss, opts, chunks);
    // One pass: vjp, no second forward. A/B interleaved (1 thread, loaded 2-core machine, best of
    // 2–3): 0.71× the two-call time at 256 × 4 (3.4M parameters, 256 × 12 tokens), 0.75× at 512 × 4
    // (13.6M, 64 × 12) once attention was token-major (model.ts); before that, the vjp path
    // measured 1.31× the two-call time at 3.4M and was kept to models up to 1M parameters.
    if (chunks.length === 1) return this.forwardBackwardOnce(batch, loss, opts);
    // Several chunks: the last one's forward keeps its residuals (0.92× at 512 × 4, 256 × 11
    // tokens in two chunks, 2 threads, interleaved best of 4; docs/benchmarks.md).
    return this.forwardBackwardChunks(batch, loss, opts, chunks);
  }

  /**
   * The batch in one pass: one forward (the jitted scoring function under `vjp`, which keeps its
   * residuals), the loss, then the pullback of its cotangents — no second forward.
   */
  private async forwardBackwardOnce(batch: TokenBatch, loss: TokenLossFn, opts: { entropy?: boolean }): Promise<LossReport> {
    const pass = this.passInputs(this.weights, batch);
    if (this.adapters) return this.loraForwardBackwardOnce(pass, batch, loss, opts);
    const { outs, pullback } = await this.forwardVjp(pass);
    const [logprobs, entropy] = outs;
    const out = loss(opts.entropy ? { logprobs: logprobs!, entropy: entropy! } : { logprobs: logprobs! }, batch);
    if (Number.isFinite(out.loss)) {
      const [gParams, gXs] = pullback(EmbeddedEngine.cotangents(pass, out.dLogprobs, out.dEntropy));
      await this.accumulate(gParams, gXs, pass.ids);
    }
    pullback.dispose();
    return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
  }

  /**
   * One pass's forward under `vjp` (the jitted scoring function; jax-js jits the forward with its
   * residuals and the pullback): log-probs and entropies [rows·T] in the contract layout, and the
   * pullback, which holds the residuals until disposed. Consumes `pass.xs`.
   */
  private async forwardVjp(pass: Pass): Promise<{ outs: Float32Array[]; pullback: OwnedFunction<(c: np.Array[]) => [Params, np.Array[]]> }> {
    const fixed = this.withTargets(pass);
    const scoreFn = this.passFns[pass.kind].score;
    const [outs, pullback] = vjp((p: Params, xs: np.Array[]) => scoreFn(p, xs, tree.ref(fixed)), [paramsFromWeights(this.config, this.weights), pass.xs]) as unknown as [
      np.Array[],
      OwnedFunction<(c: np.Array[]) => [Params, np.Array[]]>,
    ];
    tree.dispose(fixed);
    return { outs: pass.unshift((await Promise.all(outs.map((o) => o.data()))) as Float32Array[]), pullback };
  }

  /**
   * A batch split into row chunks (full weights): every chunk but the last is scored without
   * residuals, the last runs under `vjp` and keeps them; the loss is called once on the whole
   * batch; the last chunk back-propagates through its pullback (no second forward) and frees its
   * residuals, then each other chunk runs a jitted forward+backward. At most one chunk's residuals
   * are alive at a time, as with one pass.
   */
  private async forwardBackwardChunks(batch: TokenBatch, loss: TokenLossFn, opts: { entropy?: boolean }, chunks: [number, number][]): Promise<LossReport> {
    const T = batch.seqLen;
    const [la, lb] = chunks.at(-1)!;
    const rest = chunks.slice(0, -1);
    const { logprobs, entropy } = await this.forwardChunks(this.policy, batch, rest);
    const lastPass = this.passInputs(this.weights, sliceRows(batch, la, lb));
    const kept = await this.forwardVjp(lastPass);
    logprobs.set(kept.outs[0]!, la * T);
    entropy.set(kept.outs[1]!, la * T);
    const out = loss(opts.entropy ? { logprobs, entropy } : { logprobs }, batch);
    if (!Number.isFinite(out.loss)) {
      kept.pullback.dispose();
      return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
    }
    const [gLast, gXsLast] = kept.pullback(EmbeddedEngine.cotangents(lastPass, out.dLogprobs.subarray(la * T, lb * T), out.dEntropy?.subarray(la * T, lb * T)));
    kept.pullback.dispose();
    await this.accumulate(gLast, gXsLast, lastPass.ids);
    for (const [a, b] of rest) {
      const pass = this.passInputs(this.weights, sliceRows(batch, a, b));
      const cots = EmbeddedEngine.cotangents(pass, out.dLogprobs.subarray(a * T, b * T), out.dEntropy?.subarray(a * T, b * T));
      const [gParams, gXs] = this.passFns[pass.kind].grad(paramsFromWeights(this.config, this.weights), pass.xs, this.withTargets(pass), cots);
      await this.accumulate(gParams, gXs, pass.ids);
    }
    return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
  }

  /**
   * Full-weight forward-backward under native kernels: the batch is scored on onnxruntime
   * (`layerScores` → `nativeForward`), the loss is called once, then each row chunk runs the
   * pass's gradient — the jax-js function of `passFns[kind].grad`, compiled for onnxruntime
   * (`nativeFn`) — a second forward and the backward on native kernels.
   */
  private async nativeForwardBackward(batch: TokenBatch, loss: TokenLossFn, opts: { entropy?: boolean }, chunks: [number, number][]): Promise<LossReport> {
    const T = batch.seqLen;
    const { logprobs, entropy } = await this.layerScores(this.policy, batch);
    const out = loss(opts.entropy ? { logprobs, entropy } : { logprobs }, batch);
    if (!Number.isFinite(out.loss)) return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
    for (const [a, b] of chunks) {
      const pass = this.passInputs(this.weights, sliceRows(batch, a, b));
      const cots = EmbeddedEngine.cotangents(pass, out.dLogprobs.subarray(a * T, b * T), out.dEntropy?.subarray(a * T, b * T));
      const gradFn = (await this.nativeFn("pass", pass.kind))!;
      const [gParams, gXs] = await gradFn(paramsFromWeights(this.config, this.weights), pass.xs, this.withTargets(pass), cots);
      await this.accumulate(gParams, gXs, pass.ids);
    }
    return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
  }

  /** `forwardBackwardOnce` under LoRA: the pullback runs to the adapters only (base and embeddings are constants). */
  private async loraForwardBackwardOnce(pass: Pass, batch: TokenBatch, loss: TokenLossFn, opts: { entropy?: boolean }): Promise<LossReport> {
    const { xs } = pass;
    const fixed = this.withTargets(pass);
    const lora = this.lora!;
    const base = paramsFromWeights(this.config, this.weights);
    const scoreFn = this.passFns[pass.kind].score;
    const [outs, pullback] = vjp((ad: Tensors) => scoreFn(attachAdapters(tree.ref(base), this.config, lora, ad, true), tree.ref(xs), tree.ref(fixed)), [tree.ref(this.adapters!)]) as unknown as [
      np.Array[],
      OwnedFunction<(c: np.Array[]) => [Tensors]>,
    ];
    tree.dispose([fixed, xs, base]);
    const [logprobs, entropy] = pass.unshift((await Promise.all(outs.map((o) => o.data()))) as Float32Array[]);
    const out = loss(opts.entropy ? { logprobs: logprobs!, entropy: entropy! } : { logprobs: logprobs! }, batch);
    if (Number.isFinite(out.loss)) await this.addGrads(pullback(EmbeddedEngine.cotangents(pass, out.dLogprobs, out.dEntropy))[0]);
    pullback.dispose();
    return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
  }

  // ------------------------------------------------ LoRA, layer by layer (a batch past one pass)

  /**
   * LoRA forward-backward of a batch too large for one pass (memory.ts), as the torch worker
   * trains a batch past its token budget: every row chunk (memory.ts "layers") runs forward block
   * by block, keeping only each block's input [tokens, D], and its head in chunks of positions
   * (so neither the [tokens, V] logits nor the base's float32 copies of every layer are ever alive
   * together); the loss is called ONCE on the whole batch's scores; then each chunk
   * back-propagates its slice of the cotangents: the head's chunks, then each block from the last,
   * recomputing that block's forward under `grad` from its kept input. A single chunk keeps its
   * block inputs from the scoring forward; several recompute theirs (so only one chunk's are alive).
   */
  private async loraForwardBackwardLayers(batch: TokenBatch, loss: TokenLossFn, opts: { entropy?: boolean }): Promise<LossReport> {
    const T = batch.seqLen;
    const chunks = this.layerChunks(batch);
    const logprobs = new Float32Array(batch.batchSize * T);
    const entropy = new Float32Array(batch.batchSize * T);
    let kept: { pass: Pass; states: np.Array[][] } | null = null;
    for (const [a, b] of chunks) {
      const pass = this.passInputs(this.weights, sliceRows(batch, a, b));
      const { states, scores } = await this.forwardScores(pass);
      const [lp, ent] = pass.unshift(splitOutputs(pass, ...scores));
      logprobs.set(lp!, a * T);
      entropy.set(ent!, a * T);
      if (chunks.length === 1) kept = { pass, states };
      else tree.dispose([pass.xs, pass.fixed, states.slice(1)]);
    }
    const out = loss(opts.entropy ? { logprobs, entropy } : { logprobs }, batch);
    if (!Number.isFinite(out.loss)) {
      if (kept) tree.dispose([kept.pass.fixed, kept.states]);
      return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
    }
    for (const [a, b] of chunks) {
      let pass: Pass;
      let states: np.Array[][];
      if (kept) ({ pass, states } = kept);
      else {
        pass = this.passInputs(this.weights, sliceRows(batch, a, b));
        states = (await this.forwardScores(pass)).states;
      }
      const [cLp, cEnt] = flatOutputs(pass, pass.shift(out.dLogprobs.subarray(a * T, b * T), out.dEntropy?.subarray(a * T, b * T)));
      await this.addGrads(await this.layerBackward(pass, states, cLp, cEnt));
    }
    return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
  }

  /**
   * One pass's forward without gradient, block by block: every block's input and the last block's
   * output (`layerForward`; natively only with `keepStates`, else just `pass.xs`) and the head's
   * flat lp, ent in the stacked order (`headScores`) — on onnxruntime under native kernels
   * (`nativeForward`), else on jax-js.
   */
  private async forwardScores(pass: Pass, src: Source = this.policy, keepStates = true): Promise<{ states: np.Array[][]; scores: [Float32Array, Float32Array] }> {
    const dec = await this.nativeDecoder("states");
    if (dec) return this.nativeForward(dec, pass, src, keepStates);
    const states = await this.layerForward(pass, src);
    return { states, scores: await this.headScores(pass, states.at(-1)!, src) };
  }

  /**
   * `forwardScores` on onnxruntime (ort-graph.ts, "states"): states[0] is `pass.xs`, the others
   * come back from the native forward. A shared-prefix pass runs its U prefixes (P positions),
   * then its R rows' rest (S positions) over their group's prefix keys/values, as model.ts
   * `prefixBlock` does: the rest attends to the whole prefix and causally among itself.
   */
  private async nativeForward(dec: OrtDecoder, pass: Pass, src: Source, keepStates: boolean): Promise<{ states: np.Array[][]; scores: [Float32Array, Float32Array] }> {
    dec.setWeights(...(await this.nativeWeights(src)));
    const D = this.config.hiddenSize;
    const run = (ids: Int32Array, B: number, S: number, pos0: number, bias: Float32Array, next: Int32Array, cache: OrtCache | null) => {
      const { c, s } = this.ropeTables(Int32Array.from({ length: B * S }, (_, i) => pos0 + (i % S)), B * S);
      return dec.step(ids, B, S, c, s, bias, cache, next);
    };
    if (pass.kind === "full") {
      const [Bp, Tp] = pass.targetShape as [number, number];
      const r = await run(pass.ids[0]!, Bp, Tp, 0, promptBias(new Int32Array(Bp), Tp), pass.next, null);
      return { states: [pass.xs, ...(keepStates ? r.x!.slice(1).map((x) => [np.array(x).reshape([Bp, Tp, D])]) : [])], scores: [r.lp!, r.ent!] };
    }
    const [[U, P], , [R, S]] = pass.outShapes as [number, number][];
    const UP = U! * P!;
    const pre = await run(pass.ids[0]!, U!, P!, 0, promptBias(new Int32Array(U!), P!), pass.next.subarray(0, UP), null);
    const cache = new OrtCache(this.config.numLayers, R!, this.config.numKvHeads, this.config.headDim, P!);
    cache.write(pre, P!, 0, Int32Array.from({ length: R! }, (_, r) => Math.floor(r / (R! / U!))));
    const Tk = P! + S!;
    const bias = new Float32Array(R! * S! * Tk);
    for (let r = 0; r < R!; r++) for (let i = 0; i < S!; i++) bias.fill(NEG, (r * S! + i) * Tk + P! + i + 1, (r * S! + i + 1) * Tk);
    const rest = await run(pass.ids[1]!, R!, S!, P!, bias, pass.next.subarray(UP), cache);
    const cat = (a: Float32Array, b: Float32Array) => {
      const o = new Float32Array(a.length + b.length);
      o.set(a);
      o.set(b, a.length);
      return o;
    };
    return {
      states: [pass.xs, ...(keepStates ? pre.x!.slice(1).map((x, l) => [np.array(x).reshape([U!, P!, D]), np.array(rest.x![l + 1]!).reshape([R!, S!, D])]) : [])],
      scores: [cat(pre.lp!, rest.lp!), cat(pre.ent!, rest.ent!)],
    };
  }

  /**
   * The policy's forward block by block over one pass: the input of every block and the last
   * block's output ([L + 1] states, each shaped like `pass.xs`; states[0] is `pass.xs`).
   */
  private async layerForward(pass: Pass, src: Source = this.policy): Promise<np.Array[][]> {
    const p = this.params(src);
    tree.dispose([p.embed, p.norm, p.lmHead ?? [], p.headLora ?? []]);
    const states = [pass.xs];
    for (const layer of p.layers) {
      states.push(this.layerFns[pass.kind].forward(layer, tree.ref(states.at(-1)!), tree.ref(pass.fixed)));
      // Run each block before queueing the next: a queued call's buffers are allocated when it is
      // queued, so 30 queued blocks held 30 blocks' activations at once (SmolLM2: heap 3.4 GiB).
      await blockUntilReady(states.at(-1)!);
    }
    return states;
  }

  /** Positions of the head's chunks: at most HEAD_CHUNK, a power of two (fewer compiled shapes). */
  private static headChunks(n: number): { size: number; chunks: [number, number][] } {
    const size = Math.min(HEAD_CHUNK, pow2(n));
    return { size, chunks: rowChunks(n, size) };
  }

  /** The last block's output (one pass's state) as [positions, D] in the stacked order. Consumes it. */
  private flatState(state: np.Array[]): np.Array {
    const D = this.config.hiddenSize;
    const flat = state.map((x) => x.reshape([-1, D]));
    return flat.length === 1 ? flat[0]! : np.concatenate(flat, 0);
  }

  /** Rows [a, b) of x [n, D] (x not consumed), zero-padded to `size` rows; the targets one-hot [size, V] of `next` there. */
  private headInputs(x: np.Array, next: Int32Array, a: number, b: number, size: number): { x: np.Array; targets: np.Array } {
    let xc = x.ref.slice([a, b]);
    if (b - a < size) xc = np.pad(xc, [[0, size - (b - a)], [0, 0]]);
    const targets = EmbeddedEngine.oneHot((i) => (a + i < b ? next[a + i]! : -1), size, 1, this.config.vocabSize).reshape([size, this.config.vocabSize]);
    return { x: xc, targets };
  }

  /** The head (final norm, logits, log-softmax) of the last block's output, in chunks of positions: flat lp, ent. Reads `last` without consuming it. */
  private async headScores(pass: Pass, last: np.Array[], src: Source = this.policy): Promise<[Float32Array, Float32Array]> {
    const x = this.flatState(tree.ref(last));
    const n = x.shape[0]!;
    const lp = new Float32Array(n);
    const ent = new Float32Array(n);
    const { size, chunks } = EmbeddedEngine.headChunks(n);
    const head = await this.headParams(src);
    for (const [a, b] of chunks) {
      const inp = this.headInputs(x, pass.next, a, b, size);
      const [l, e] = this.headFns.score(tree.ref(head), inp.x, inp.targets);
      lp.set(((await l!.data()) as Float32Array).subarray(0, b - a), a);
      ent.set(((await e!.data()) as Float32Array).subarray(0, b - a), a);
    }
    tree.dispose([x, head]);
    return [lp, ent];
  }

  /**
   * The head's weights, its LoRA adapter attached when it has one; a packed-bfloat16 head matrix
   * unpacked to float32 here, once, not inside the jitted head: fused into the backward's
   * [positions, V] × [V, D] product, the unpacking ran that product for minutes a chunk on SmolLM2.
   */
  private async headParams(src: Source = this.policy): Promise<Pick<Params, "embed" | "lmHead" | "norm" | "headLora">> {
    const { embed, lmHead, norm, headLora, layers } = this.params(src);
    tree.dispose(layers);
    const hp = { embed: dense(embed), norm, ...(lmHead ? { lmHead: dense(lmHead) } : {}), ...(headLora ? { headLora } : {}) };
    await blockUntilReady(hp);
    return hp;
  }

  /**
   * The head's backward of `layerBackward`: dL/dx [n, D] of the last state x (flat, stacked order;
   * consumed), the head adapter's gradients added to `grads`. On onnxruntime under native
   * inference when the head has no adapter (ort-graph.ts `headGradOnnx`), else on jax-js in chunks.
   */
  private async headBackward(pass: Pass, x: np.Array, cLp: Float32Array, cEnt: Float32Array, grads: Tensors): Promise<np.Array> {
    const n = x.shape[0]!;
    const D = this.config.hiddenSize;
    const native = this.lora?.targets.includes(LORA_HEAD_MODULE) ? null : await this.nativeHeadGrad();
    if (native) {
      const base = await this.nativeBase(this.policy);
      const host = ortReadable((await x.data()) as Float32Array);
      const dx = new Float32Array(n * D);
      for (const [a, b] of rowChunks(n, NATIVE_HEAD_ROWS)) dx.set(await native.run(base, host.subarray(a * D, b * D), pass.next.subarray(a, b), cLp.subarray(a, b), cEnt.subarray(a, b)), a * D);
      return np.array(dx).reshape([n, D]);
    }
    const { size, chunks } = EmbeddedEngine.headChunks(n);
    const head = await this.headParams();
    const headAd = head.headLora;
    delete head.headLora;
    const dxs: np.Array[] = [];
    const pad = (c: Float32Array, a: number, b: number) => {
      const out = new Float32Array(size);
      out.set(c.subarray(a, b));
      return np.array(out);
    };
    for (const [a, b] of chunks) {
      const inp = this.headInputs(x, pass.next, a, b, size);
      const [dx, dAd] = this.headFns.grad(inp.x, headAd ? tree.ref(headAd) : null, tree.ref(head), inp.targets, pad(cLp, a, b), pad(cEnt, a, b));
      dxs.push(b - a < size ? dx.slice([0, b - a]) : dx);
      if (dAd) {
        const [nA, nB] = [adapterTensorName(-1, LORA_HEAD_MODULE, "A"), adapterTensorName(-1, LORA_HEAD_MODULE, "B")];
        grads[nA] = grads[nA] ? grads[nA].add(dAd.a) : dAd.a;
        grads[nB] = grads[nB] ? grads[nB].add(dAd.b) : dAd.b;
      }
      // Run this chunk now: pending operations keep their inputs (logits-sized) alive.
      await blockUntilReady([dxs, grads]);
    }
    tree.dispose([x, head, headAd ?? []]);
    return dxs.length === 1 ? dxs[0]! : np.concatenate(dxs, 0);
  }

  /**
   * Back-propagates flat cotangents of lp and ent (stacked order) through one pass whose block
   * states `layerForward` returned: the head in chunks, then every block from the last. Consumes
   * the states and the pass's fixed inputs.
   * @returns the adapters' gradients by name
   */
  private async layerBackward(pass: Pass, states: np.Array[][], cLp: Float32Array, cEnt: Float32Array): Promise<Tensors> {
    const lora = this.lora!;
    const adapters = this.adapters!;
    const grads: Tensors = {};
    const x = this.flatState(states.pop()!);
    const dFlat = await this.headBackward(pass, x, cLp, cEnt, grads);
    // dL/d(last state), back in the state's shapes.
    let at = 0;
    let cot = states[0]!.map((s, i, all) => {
      const len = s.shape.slice(0, -1).reduce((m, d) => m * d, 1);
      const part = i === all.length - 1 ? dFlat.slice([at, at + len]) : dFlat.ref.slice([at, at + len]);
      at += len;
      return part.reshape(s.shape);
    });
    const base = paramsFromWeights(this.config, this.weights);
    tree.dispose([base.embed, base.norm, base.lmHead ?? []]);
    const specs = adapterSpecs(this.config, lora);
    const native = await this.nativeFn("block", pass.kind);
    for (let i = this.config.numLayers - 1; i >= 0; i--) {
      const mine = specs.filter((s) => s.layer === i && s.which === "A");
      const ad = Object.fromEntries(mine.map((s) => [s.module, { a: adapters[s.name]!.ref, b: adapters[adapterTensorName(i, s.module, "B")]!.ref }])) as Partial<Record<LoraModule, Adapter>>;
      // Natively, a bfloat16 base is unpacked first (the translation has no bit casts).
      const [dAd, dState] = native ? await native(ad, denseLayer(base.layers[i]!), states[i]!, tree.ref(pass.fixed), cot) : this.layerFns[pass.kind].grad(ad, base.layers[i]!, states[i]!, tree.ref(pass.fixed), cot);
      for (const s of mine) {
        grads[s.name] = dAd[s.module as LoraModule]!.a;
        grads[adapterTensorName(i, s.module, "B")] = dAd[s.module as LoraModule]!.b;
      }
      cot = dState;
      // Run this block's backward now: pending operations keep their inputs (the block's recomputed activations) alive.
      await blockUntilReady([grads, cot]);
    }
    tree.dispose([cot, pass.fixed]);
    return grads;
  }

  /**
   * Adds one pass's parameter gradients and dL/dx for each embedded input (scattered into the
   * embedding rows of its token ids `ids[i]`) to `gradAcc`. Consumes the gradients.
   */
  private async accumulate(gParams: Params, gXs: np.Array[], ids: Int32Array[]): Promise<void> {
    const g = weightsFromParams(gParams);
    // Scatter-add dL/dx0 into the embedding gradient (the lookup ran outside jit).
    const D = this.config.hiddenSize;
    const embName = "model.embed_tokens.weight";
    const dEmb = new Float32Array(this.config.vocabSize * D);
    for (let i = 0; i < gXs.length; i++) {
      const dx = (await gXs[i]!.data()) as Float32Array;
      const rowIds = ids[i]!;
      for (let r = 0; r < rowIds.length; r++) {
        const src = r * D;
        const dst = rowIds[r]! * D;
        for (let j = 0; j < D; j++) dEmb[dst + j]! += dx[src + j]!;
      }
    }
    g[embName] = g[embName]!.add(np.array(dEmb).reshape([this.config.vocabSize, D]));
    await this.addGrads(g);
  }

  /** Adds gradients (of the trainable tensors, by name) to `gradAcc`. Consumes them. */
  private async addGrads(g: Tensors): Promise<void> {
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
    const trained = this.adapters ?? this.weights;
    if (!this.adam) {
      const zeros = (): Tensors => Object.fromEntries(Object.entries(trained).map(([k, w]) => [k, np.zeros(w.shape)]));
      this.adam = { m: zeros(), v: zeros(), t: 0 };
    }
    this.adam.t += 1;
    const b1 = opt.beta1 ?? 0.9;
    const b2 = opt.beta2 ?? 0.999;
    const scale = opt.maxGradNorm && gradNorm > opt.maxGradNorm ? opt.maxGradNorm / (gradNorm + 1e-6) : 1;
    const hyper = np.array(
      new Float32Array([opt.lr, b1, b2, opt.eps ?? 1e-8, opt.weightDecay ?? 0, 1 - Math.pow(b1, this.adam.t), 1 - Math.pow(b2, this.adam.t), scale]),
    );
    const out = adamwUpdate(trained, grads, this.adam.m, this.adam.v, hyper) as { w: Tensors; m: Tensors; v: Tensors };
    if (this.adapters) this.adapters = out.w;
    else this.weights = out.w;
    this.version++;
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
      // (Under LoRA a snapshot of the adapters: the base is shared.)
      this.reference = tree.ref(this.adapters ?? this.weights);
    } else if (this.lora) {
      if (!readAdapterInfo(from.dir)) throw new Error(`setReference: under LoRA the reference is an adapter directory (adapter_config.json); ${from.dir} has none`);
      this.reference = await readAdapters(from.dir, this.config, this.lora);
    } else {
      this.reference = (await loadCheckpoint(from.dir)).weights;
    }
  }

  /**
   * The k most likely tokens of each next-token distribution along `tokens` under the policy
   * (Tinker's top-k prompt log-probs): row t (1 ≤ t < len) lists the top k of the distribution
   * that predicted token t, by log-prob descending (ties: lower id first); row 0 has none.
   * Not part of the engine contract: the torch engine does not offer it.
   * @returns ids and logprobs, row-major [len, k] (row 0: id −1, log-prob NaN)
   * @throws Error when k is not in [1, vocabSize] or a token id is outside the vocabulary
   */
  async topLogprobs(tokens: Int32Array, k: number): Promise<{ ids: Int32Array; logprobs: Float32Array }> {
    const V = this.config.vocabSize;
    const T = tokens.length;
    if (!Number.isInteger(k) || k < 1 || k > V) throw new Error(`topLogprobs: k must be an integer in [1, ${V}], got ${k}`);
    for (const id of tokens) if (id < 0 || id >= V) throw new Error(`topLogprobs: token id ${id} is outside the vocabulary [0, ${V})`);
    const Tp = passLength(T, LEN_BUCKET);
    const ids = Int32Array.from({ length: Tp }, (_, i) => (i < T ? tokens[i]! : 0));
    const { cos, sin } = this.rope(Int32Array.from({ length: Tp }, (_, i) => i), 1, Tp);
    const logits = (await (this.logitsFn(this.params(this.policy), this.embed(this.weights, ids, 1, Tp), cos, sin, EmbeddedEngine.causalBias(0, Tp)) as np.Array).data()) as Float32Array;
    const outIds = new Int32Array(T * k).fill(-1);
    const outLp = new Float32Array(T * k).fill(NaN);
    for (let t = 1; t < T; t++) {
      const row = logits.subarray((t - 1) * V, t * V);
      let max = -Infinity;
      for (let v = 0; v < V; v++) max = Math.max(max, row[v]!);
      let sum = 0;
      for (let v = 0; v < V; v++) sum += Math.exp(row[v]! - max);
      const lse = max + Math.log(sum);
      // Insertion into a sorted list of the k best (descending logit; a tie keeps the lower id first).
      const best: number[] = [];
      for (let v = 0; v < V; v++) {
        if (best.length === k && row[v]! <= row[best[k - 1]!]!) continue;
        let i = best.length === k ? k - 1 : best.length;
        while (i > 0 && row[best[i - 1]!]! < row[v]!) i--;
        best.splice(i, 0, v);
        if (best.length > k) best.pop();
      }
      best.forEach((v, j) => {
        outIds[t * k + j] = v;
        outLp[t * k + j] = row[v]! - lse;
      });
    }
    return { ids: outIds, logprobs: outLp };
  }

  // ---------------------------------------------------------------- sampling

  async sample(req: SampleRequest): Promise<SampleResult[]> {
    const rows: { promptIndex: number; prompt: Int32Array; rng: Rng }[] = [];
    req.prompts.forEach((prompt, i) => {
      for (let j = 0; j < req.n; j++) rows.push({ promptIndex: i, prompt, rng: new Rng(hash32(req.seed, i, j)) });
    });
    // Rows per call: the option (default 512), lowered when the heap plan (memory.ts) says so.
    const longest = Math.max(1, ...req.prompts.map((p) => p.length));
    const planned = maxRows(this.config, "sample", roundUp(roundUp(longest, 4) + req.maxNewTokens, 16), undefined, this.memoryPlan);
    const chunk = Math.max(1, Math.min(this.opts.maxSampleBatch ?? 512, planned));
    const results: SampleResult[] = [];
    for (let start = 0; start < rows.length; start += chunk) {
      results.push(...(await this.sampleRows(rows.slice(start, start + chunk), req)));
    }
    return results;
  }

  /**
   * Sampling's prompt step: the `Up` distinct left-padded prompts (ids/positions [Up·P], pad [Up])
   * through every layer, in row chunks planned against the heap (memory.ts "prefill": one jitted
   * prefill holds every layer's activations until it returns — 0.22 GiB per 96-token row on
   * SmolLM2-135M, so 16 chat prompts at once exceeded the 4 GiB Wasm heap).
   * @returns the logits of each prompt's last position [Up, V] and its KV cache (per layer [Up, P, KV, hd])
   */
  private async prefill(params: Params, prompt: LeftPadded, Up: number, P: number): Promise<{ logits: np.Array; cache: KvCache }> {
    const c = Math.min(Up, this.opts.maxPassRows ?? Infinity, maxRows(this.config, "prefill", P, undefined, this.memoryPlan));
    const parts: { logits: np.Array; cache: KvCache }[] = [];
    for (let a = 0; a < Up; a += c) {
      const bias = promptBias(prompt.pad.subarray(a, a + c), P);
      const { cos, sin } = this.rope(prompt.positions.subarray(a * P, (a + c) * P), c, P);
      const x0 = this.embed(this.weights, prompt.ids.subarray(a * P, (a + c) * P), c, P);
      const part = this.prefillFn(tree.ref(params), x0, cos, sin, np.array(bias).reshape([c, 1, P, P])) as { logits: np.Array; cache: KvCache };
      if (c < Up) await blockUntilReady(part); // queued calls would hold every chunk's activations at once
      parts.push(part);
    }
    if (parts.length === 1) return parts[0]!;
    const cat = (xs: np.Array[]) => np.concatenate(xs, 0);
    const layer = (kv: "k" | "v") => parts[0]!.cache[kv].map((_, l) => cat(parts.map((q) => q.cache[kv][l]!)));
    return { logits: cat(parts.map((q) => q.logits)), cache: { k: layer("k"), v: layer("v") } };
  }

  /**
   * Sampling's model calls on jax-js: the prompt step (`prefill`) fills a prompt cache [Bp, P, K, d]
   * per layer; decode step s ≥ 1 writes the position sampled at s − 1 into generated slot s − 1 of
   * [Bp, Tg, K, d] and attends over the P prompt slots and the Tg generated slots.
   */
  private jaxDecodeSteps(P: number, Tg: number, Bp: number, pad: Int32Array): DecodeSteps {
    const cfg = this.config;
    const sp = this.samplingParams();
    let promptCache: KvCache | null = null;
    let cache: KvCache | null = null;
    return {
      prompt: async (prompt, Up, src, shared) => {
        const res = await this.prefill(sp, prompt, Up, P);
        promptCache = res.cache;
        if (!shared) {
          // Every row takes its prompt's cache rows.
          const idx = np.array(src, { dtype: np.int32 });
          const take = (a: np.Array) => np.take(a, idx.ref, 0);
          promptCache = { k: promptCache.k.map(take), v: promptCache.v.map(take) };
          idx.dispose();
        }
        const zeros = () => np.zeros([Bp, Tg, cfg.numKvHeads, cfg.headDim]);
        cache = { k: promptCache.k.map(zeros), v: promptCache.v.map(zeros) };
        return (await res.logits.data()) as Float32Array;
      },
      next: async (ids, positions, step) => {
        const Tk = P + Tg;
        const { cos, sin } = this.rope(positions, Bp, 1);
        const x0 = this.embed(this.weights, ids, Bp, 1);
        const biasArr = np.array(decodeBias(pad, P + step - 1, Tk)).reshape([Bp, 1, 1, Tk]);
        const write = new Float32Array(Tg);
        write[step - 1] = 1;
        const [pc, c] = [promptCache!, cache!];
        // A decode step's kernels are small (one row per sequence): where synchronous dispatch is
        // off they run on this thread, not through jax-js's worker pool's round trips
        // (docs/jax-js-patch.md; same results, faster: docs/benchmarks.md).
        return withInlineKernels(async () => {
          const r = this.decodeFn(tree.ref(sp), x0, cos, sin, biasArr, tree.ref(pc), c, np.array(write).reshape([1, Tg, 1, 1])) as { logits: np.Array; cache: KvCache };
          cache = r.cache;
          return (await r.logits.data()) as Float32Array;
        });
      },
      dispose: () => {
        tree.dispose(sp);
        if (cache) tree.dispose(cache);
        if (promptCache) tree.dispose(promptCache);
      },
    };
  }

  /**
   * Sampling's model calls on onnxruntime's native kernels (ort-runtime.ts): the same decoder over
   * a preallocated host cache of P + Tg slots per layer (prompt slots, then generated slot s − 1
   * written after step s), each step writing only its new position.
   */
  private async ortDecodeSteps(dec: OrtDecoder, P: number, Tg: number, Bp: number, pad: Int32Array): Promise<DecodeSteps> {
    const cfg = this.config;
    dec.setWeights(...(await this.nativeWeights(this.policy)));
    const cache = new OrtCache(cfg.numLayers, Bp, cfg.numKvHeads, cfg.headDim, P + Tg);
    return {
      prompt: async (prompt, Up, src) => {
        const { c, s } = this.ropeTables(prompt.positions, Up * P);
        const r = await dec.step(prompt.ids, Up, P, c, s, promptBias(prompt.pad, P), null);
        cache.write(r, P, 0, src);
        return r.logits!;
      },
      next: async (ids, positions, step) => {
        const Tc = cache.Tc;
        const bias = decodeBias(pad, P + step - 2, Tc + 1);
        for (let b = 0; b < Bp; b++) bias[b * (Tc + 1) + Tc] = 0; // the new position itself
        const { c, s } = this.ropeTables(positions, Bp);
        const r = await dec.step(ids, Bp, 1, c, s, bias, cache);
        cache.write(r, 1, P + step - 1);
        return r.logits!;
      },
      dispose: () => {},
    };
  }

  /** Native kernels on (EmbeddedEngineOptions.nativeKernels, else RLVR_NATIVE_KERNELS). */
  private get native(): boolean {
    return this.opts.nativeKernels ?? nativeKernelsDefault();
  }

  /** The native head backward (ort-runtime.ts `OrtHeadGrad`), or null where native kernels are off. */
  private async nativeHeadGrad(): Promise<OrtHeadGrad | null> {
    if (!this.native) return null;
    this.ortHeadGrad ??= OrtHeadGrad.create(this.decoderConfig, jaxThreads().threads);
    const hg = await this.ortHeadGrad;
    if (!hg) throw new Error(NO_ORT);
    return hg;
  }

  /**
   * Native training: a pass's gradient (full weights) or a block's gradient
   * (layer-by-layer LoRA) compiled for onnxruntime (ort-runtime.ts `nativeJit`: the same jax-js
   * function, traced and translated), or null where native kernels are off.
   */
  private async nativeFn<K extends keyof NativeFns>(which: K, kind: Pass["kind"]): Promise<NativeJit<NativeFns[K]> | null> {
    if (!this.native) return null;
    if (!(await loadOrt())) throw new Error(NO_ORT);
    const source = { pass: this.gradFns, block: this.blockGradFns }[which][kind] as NativeFns[K];
    const fns = this.nativeFns[which] as Partial<Record<Pass["kind"], NativeJit<NativeFns[K]>>>;
    return (fns[kind] ??= nativeJit(source, jaxThreads().threads));
  }

  /** The onnxruntime decoder of this engine for `mode`, or null where native kernels are off. */
  private async nativeDecoder(mode: "sample" | "states" = "sample"): Promise<OrtDecoder | null> {
    if (!this.native) return null;
    const lora = this.lora && this.adapters ? this.lora.targets : [];
    const blocks = lora.filter((t): t is LoraModule => t !== LORA_HEAD_MODULE);
    this.ortDecoders[mode] ??= OrtDecoder.create(this.decoderConfig, { head: lora.includes(LORA_HEAD_MODULE), blocks }, jaxThreads().threads, mode);
    const dec = await this.ortDecoders[mode];
    if (!dec) throw new Error(NO_ORT);
    return dec;
  }

  private async sampleRows(rows: { promptIndex: number; prompt: Int32Array; rng: Rng }[], req: SampleRequest): Promise<SampleResult[]> {
    const cfg = this.config;
    const V = cfg.vocabSize;
    const R = rows.length;
    const Bp = pow2(R);
    const maxPrompt = Math.max(1, ...rows.map((r) => r.prompt.length));
    const P = roundUp(maxPrompt, 4);
    if (P + req.maxNewTokens > cfg.maxPositionEmbeddings) {
      throw new Error(`prompt (${maxPrompt} tokens, padded to ${P}) + maxNewTokens (${req.maxNewTokens}) exceeds the model's maxPositionEmbeddings ${cfg.maxPositionEmbeddings}; lower maxNewTokens to ${Math.max(0, cfg.maxPositionEmbeddings - P)} or less`);
    }
    const stop = new Set(req.stopTokens ?? []);
    // The prompt step runs each distinct prompt once (a group's n rows share it), then every row
    // takes its prompt's cache rows and logits: `src[b]` is row b's prompt row in that step.
    const firstRow = new Map<number, number>();
    const src = new Int32Array(Bp);
    const uniq: Int32Array[] = [];
    rows.forEach((r, b) => {
      const key = this.opts.sharedPrefix === false ? b : r.promptIndex;
      if (!firstRow.has(key)) {
        firstRow.set(key, uniq.length);
        uniq.push(r.prompt);
      }
      src[b] = firstRow.get(key)!;
    });
    const Up = pow2(uniq.length);
    const pad = leftPad((b) => (b < R ? rows[b]!.prompt : rows[0]!.prompt), Bp, P).pad;
    const prompt = leftPad((u) => uniq[u] ?? uniq[0]!, Up, P);
    const out = rows.map(() => ({ tokens: [] as number[], logprobs: [] as number[], done: false, reason: "max_tokens" as SampleResult["stopReason"] }));
    // Step 0 runs the P prompt positions of the Up distinct prompts; step s ≥ 1 decodes one
    // position of every row (query slot P + s − 1). No call after the last token: its logits would go unused.
    const dec = await this.nativeDecoder();
    // Tg generated slots: step s ≥ 1 writes the token sampled at step s − 1 into slot s − 1.
    const Tg = roundUp(Math.max(1, req.maxNewTokens - 1), 4);
    const steps = dec ? await this.ortDecodeSteps(dec, P, Tg, Bp, pad) : this.jaxDecodeSteps(P, Tg, Bp, pad);
    let stepIds = new Int32Array(Bp);
    let stepPos = new Int32Array(Bp);
    try {
      for (let step = 0; step < req.maxNewTokens; step++) {
        const logits = step === 0 ? await steps.prompt(prompt, Up, src, Up === Bp && uniq.length === R) : await steps.next(stepIds, stepPos, step);
        const nextIds = new Int32Array(Bp);
        const nextPos = new Int32Array(Bp);
        let alive = 0;
        for (let b = 0; b < R; b++) {
          const o = out[b]!;
          if (!o.done) {
            const { token, logprob } = sampleToken(logits, (step === 0 ? src[b]! : b) * V, V, { temperature: req.temperature, topK: req.topK, topP: req.topP }, rows[b]!.rng);
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
        stepIds = nextIds;
        stepPos = nextPos;
      }
    } finally {
      steps.dispose();
    }
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
    return [...Object.keys(this.weights), ...Object.keys(this.adapters ?? {})].sort();
  }

  /** A copy of weight `name` in the Hugging Face layout ([out, in] for linear weights; LoRA adapters by their peft names, A [r, in], B [out, r]). */
  async getWeight(name: string): Promise<Float32Array> {
    return exportTensor(this.adapters && name in this.adapters ? this.adapters : this.weights, name);
  }

  /** Overwrite weight `name` from data in the Hugging Face layout. */
  setWeight(name: string, data: Float32Array): void {
    const into = this.adapters && name in this.adapters ? this.adapters : this.weights;
    const old = into[name];
    if (!old) throw new Error(`no weight named ${name}`);
    if (old.dtype !== np.float32) throw new Error(`setWeight(${name}): the weight is stored as packed bfloat16 (model.lora.baseDtype); use baseDtype float32`);
    const shape = old.shape;
    const internal = shape.length === 2 && name !== "model.embed_tokens.weight" ? transposeCopy(data, shape[1]!, shape[0]!) : data;
    if (internal.length !== old.size) throw new Error(`setWeight(${name}): expected ${old.size} values, got ${data.length}`);
    into[name] = np.array(Float32Array.from(internal)).reshape(shape);
    old.dispose();
    this.version++;
    if (into === this.weights) this.baseVersion++;
  }

  /** A copy of the accumulated gradient of `name` (HF layout), or null before any forwardBackward. */
  async getGrad(name: string): Promise<Float32Array | null> {
    return this.gradAcc ? exportTensor(this.gradAcc, name) : null;
  }

  // ---------------------------------------------------------------- I/O

  /**
   * The checkpoint in `dir`: the Hugging Face layout, or under LoRA the adapter in peft's layout
   * (adapter_config.json naming the base by absolute path; a random-init base is written to
   * `dir/base` and named relatively), `merged/` (base + adapters folded, float32) with lora.saveMerged, and
   * optimizer.safetensors (adapter moments) when asked. Tokenizer files go beside every model.
   */
  async save(dir: string, opts: { optimizer?: boolean } = {}): Promise<void> {
    if (!this.lora || !this.adapters) {
      await saveCheckpoint(dir, this.config, this.weights, opts.optimizer ? this.adam : null, this.opts.tokenizer);
      return;
    }
    const tok = this.opts.tokenizer;
    // A random-init base goes to base/ inside the checkpoint, named relatively (the trainer renames checkpoint directories).
    if (!this.baseDir) await saveCheckpoint(join(dir, "base"), this.config, this.weights, null, tok);
    await writeAdapters(dir, this.lora, this.baseDir ?? "base", this.adapters);
    if (tok) await tok.save(dir);
    if (opts.optimizer && this.adam) {
      const state = { ...(await adaptersToDisk(this.adam.m, "m:")), ...(await adaptersToDisk(this.adam.v, "v:")) };
      state["step"] = { shape: [1], data: new Float32Array([this.adam.t]) };
      await writeSafetensors(join(dir, "optimizer.safetensors"), state);
    }
    if (this.lora.saveMerged) {
      const merged = mergeAdapters(this.weights, this.config, this.lora, this.adapters);
      await saveCheckpoint(join(dir, "merged"), this.config, merged, null, tok);
      tree.dispose(merged);
    }
  }

  async load(dir: string): Promise<void> {
    this.version++;
    this.baseVersion++;
    if (this.lora && this.adapters) {
      if (!readAdapterInfo(dir)) throw new Error(`load: under LoRA a checkpoint is an adapter directory (adapter_config.json); ${dir} has none`);
      const adapters = await readAdapters(dir, this.config, this.lora);
      tree.dispose(this.adapters);
      this.adapters = adapters;
      if (this.adam) tree.dispose([this.adam.m, this.adam.v]);
      this.adam = await loadOptimizerState(dir);
      this.zeroGrad();
      return;
    }
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
    const decs = [...(await Promise.all(Object.values(this.ortDecoders))), await this.ortHeadGrad];
    this.ortDecoders = {};
    this.ortHeadGrad = undefined;
    this.ortBase = null;
    await Promise.all(decs.map((d) => d?.close()));
    const fns = Object.values(this.nativeFns).flatMap((f) => Object.values(f));
    this.nativeFns = { pass: {}, block: {} };
    await Promise.all(fns.map((f) => f.dispose()));
    tree.dispose(this.weights);
    if (this.adapters) tree.dispose(this.adapters);
    this.adapters = null;
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
  if (!t[name]) throw new Error(`no tensor named ${name}`);
  const a = dense(t[name].ref);
  const shape = a.shape;
  const data = (await a.data()) as Float32Array;
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

/** The weights with every even-width matrix stored as packed bfloat16 (a frozen LoRA base). Consumes `w`. */
async function packWeights(w: Tensors): Promise<Tensors> {
  const out: Tensors = {};
  for (const [name, a] of Object.entries(w)) {
    const shape = a.shape;
    out[name] = storeWeight((await a.data()) as Float32Array, shape, true);
  }
  return out;
}

/** A block's parameters with every packed bfloat16 weight unpacked to float32 (model.ts `dense`). Consumes `p`. */
function denseLayer(p: LayerParams): LayerParams {
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, k === "lora" ? v : dense(v as np.Array)])) as LayerParams;
}
