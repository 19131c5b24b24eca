/**
 * Native kernels (EmbeddedEngineOptions.nativeKernels): the embedded engine's model on
 * onnxruntime's native CPU kernels (MLAS: AVX2/AVX-512/NEON GEMMs), where the optional package
 * `onnxruntime-node` is installed. Inference runs hand-built decoder graphs (ort-graph.ts):
 * sampling (`OrtDecoder` "sample", `OrtCache`), the forward of scoring and of layer-by-layer LoRA
 * training (`OrtDecoder` "states") and the head's backward (`OrtHeadGrad`). Training runs jax-js's
 * own gradient programs translated to ONNX (`nativeJit`, ort-jaxpr.ts): the full-weight forward
 * and backward, and each block's backward under LoRA. Its float32 GEMMs run 4–6× faster than
 * jax-js's 128-bit Wasm SIMD on an AVX-512 CPU (docs/benchmarks.md, "Native inference on
 * onnxruntime" and "Native training"). Why a library and not our own kernels: onnxruntime is
 * Microsoft's maintained runtime (monthly releases), its CPU kernels are what the field ships for
 * CPU inference, and it is an optional peer: without it nothing changes. Browsers keep jax-js.
 */
import { makeJaxpr, numpy as np, tree, type JsTree } from "@jax-js/jax";
import { decoderOnnx, headGradOnnx, ortWeightNames } from "./ort-graph.ts";
import { jaxprToOnnx, type OnnxProgram } from "./ort-jaxpr.ts";
import { dense, type DecoderConfig, type LoraModule, type Params } from "./model.ts";

/** The part of onnxruntime-node's API used here (an optional peer: its own types may be absent). */
declare namespace Ort {
  interface Tensor {
    readonly data: unknown;
  }
  interface InferenceSession {
    run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>>;
    release(): Promise<void>;
  }
}
/** The onnxruntime-node module (the subset rlvr calls). */
export interface OrtModule {
  Tensor: new (type: "float32" | "int64" | "int32" | "uint32" | "bool" | "float64", data: HostData | BigInt64Array, dims: readonly number[]) => Ort.Tensor;
  InferenceSession: { create(model: Uint8Array, options: Record<string, unknown>): Promise<Ort.InferenceSession> };
}
let ortModule: Promise<OrtModule | null> | undefined;

/**
 * onnxruntime-node when it is installed and loads (Node only), else null. Loaded once per process.
 * The package is an optional peer dependency: `npm install onnxruntime-node` enables native kernels.
 */
export function loadOrt(): Promise<OrtModule | null> {
  if (!ortModule) {
    const isNode = typeof process !== "undefined" && !!process.versions?.node;
    const name = "onnxruntime-node"; // a variable, so browser bundlers leave the import alone
    ortModule = isNode
      ? import(/* @vite-ignore */ name).then((m: { default?: OrtModule } & OrtModule) => m.default ?? m).catch(() => null)
      : Promise.resolve(null);
  }
  return ortModule;
}

/** A host array of one of jax-js's dtypes onnxruntime reads (bool travels as Uint8Array). */
type HostData = Float32Array | Int32Array | Uint32Array | Uint8Array | Float64Array;

/** `data` as onnxruntime-node can read it: copied off a SharedArrayBuffer (jax-js's heap with worker threads), else as is. */
export function ortReadable<T extends HostData>(data: T): T {
  return (data.buffer instanceof SharedArrayBuffer ? data.slice() : data) as T;
}

/** Host float32 copies of the decoder's weights, keyed by the graph's input names (ort-graph.ts). */
export type OrtWeights = Map<string, { data: Float32Array; dims: number[] }>;

/**
 * Copies `p`'s weights (jax-js arrays; packed bfloat16 unpacked) to host float32 arrays for the
 * graph, linear weights transposed to the Hugging Face layout [out, in]. `part`: "base" — all but
 * the LoRA factors; "adapters" — the head's and the blocks' LoRA factors (A [in, r], B [r, out],
 * `ortWeightNames.lora`); "all" — both. Does not consume `p`. Cost: one copy of what it takes
 * (the base of SmolLM2-135M: 0.54 GB; its rank-16 adapters: 20 MB).
 */
export async function ortWeights(p: Params, part: "all" | "base" | "adapters" = "all"): Promise<OrtWeights> {
  const out: OrtWeights = new Map();
  const put = async (name: string, a: np.Array | undefined, transpose = false) => {
    if (!a) return;
    const f = transpose ? dense(a.ref).transpose([1, 0]) : dense(a.ref);
    const dims = [...f.shape];
    out.set(name, { data: ortReadable((await f.data()) as Float32Array), dims });
  };
  if (part !== "adapters") {
    await put(ortWeightNames.embed, p.embed);
    await put(ortWeightNames.norm, p.norm);
    await put(ortWeightNames.lmHead, p.lmHead, true);
    for (let i = 0; i < p.layers.length; i++) {
      const l = p.layers[i]!;
      const n = ortWeightNames.layer(i);
      for (const key of Object.keys(n) as (keyof typeof n)[]) await put(n[key], l[key], key.startsWith("w"));
    }
  }
  if (part !== "base") {
    await put(ortWeightNames.headA, p.headLora?.a);
    await put(ortWeightNames.headB, p.headLora?.b);
    for (let i = 0; i < p.layers.length; i++) {
      for (const [module, ad] of Object.entries(p.layers[i]!.lora ?? {}) as [LoraModule, { a: np.Array; b: np.Array }][]) {
        await put(ortWeightNames.lora(i, module, "a"), ad.a);
        await put(ortWeightNames.lora(i, module, "b"), ad.b);
      }
    }
  }
  return out;
}

/**
 * One decoder call's result: every layer's new keys [B, K, d, S] and values [B, K, S, d]; a
 * "sample" session's last-position logits [B, V]; a "states" session's block inputs and last
 * output `x` (L + 1 of [B·S, D]) and per-position `lp`, `ent` [B·S] of the targets.
 */
export interface OrtStep {
  logits?: Float32Array;
  x?: Float32Array[];
  lp?: Float32Array;
  ent?: Float32Array;
  k: Float32Array[];
  v: Float32Array[];
}

/**
 * A preallocated key/value cache of Tc slots per layer for native decoding, in the graph's layouts:
 * keys [B, K, d, Tc] (transposed, so the score matmul reads them as they are), values [B, K, Tc, d].
 * Each step writes only its new positions; the mask hides the slots not yet written.
 */
export class OrtCache {
  readonly k: Float32Array[];
  readonly v: Float32Array[];

  constructor(
    layers: number,
    private readonly B: number,
    private readonly K: number,
    private readonly d: number,
    readonly Tc: number,
  ) {
    this.k = Array.from({ length: layers }, () => new Float32Array(B * K * d * Tc));
    this.v = Array.from({ length: layers }, () => new Float32Array(B * K * Tc * d));
  }

  /**
   * Writes a step's S new positions into slots at … at + S − 1 of every row: row b takes row
   * src[b] of the step's output (the prompt step runs each distinct prompt once), or row b.
   */
  write(step: OrtStep, S: number, at: number, src?: Int32Array): void {
    const { B, K, d, Tc } = this;
    for (let i = 0; i < this.k.length; i++) {
      const [kc, vc, kn, vn] = [this.k[i]!, this.v[i]!, step.k[i]!, step.v[i]!];
      for (let b = 0; b < B; b++) {
        const sb = src ? src[b]! : b;
        for (let h = 0; h < K; h++) {
          // Keys: d runs of S values (plain loops: a subarray view per run cost a decode step
          // ~100k allocations on SmolLM2).
          for (let e = 0; e < d; e++) {
            const from = ((sb * K + h) * d + e) * S;
            const to = ((b * K + h) * d + e) * Tc + at;
            for (let t = 0; t < S; t++) kc[to + t] = kn[from + t]!;
          }
          vc.set(vn.subarray((sb * K + h) * S * d, (sb * K + h + 1) * S * d), ((b * K + h) * Tc + at) * d);
        }
      }
    }
  }
}

/**
 * An onnxruntime session of the decoder graph for one model config; weights are fed per call.
 * Sessions hold no weights, so one per engine serves every policy version.
 */
export class OrtDecoder {
  private weightFeeds: Record<string, Ort.Tensor> = {};

  private constructor(
    private readonly ort: OrtModule,
    private readonly session: Ort.InferenceSession,
    private readonly cfg: DecoderConfig,
    readonly mode: "sample" | "states",
  ) {}

  /**
   * @param lora which LoRA factors are graph inputs: the head's, the blocks' modules (ort-graph.ts)
   * @param threads onnxruntime's intra-op threads (the engine's jax-js thread count)
   * @param mode "sample": last-position logits; "states": every block's input and the targets' log-probs (ort-graph.ts)
   * @returns null when onnxruntime-node is not installed
   */
  static async create(cfg: DecoderConfig, lora: { head: boolean; blocks: readonly LoraModule[] }, threads: number, mode: "sample" | "states" = "sample"): Promise<OrtDecoder | null> {
    const ort = await loadOrt();
    if (!ort) return null;
    const session = await ort.InferenceSession.create(decoderOnnx(cfg, lora.head, mode, lora.blocks), sessionOptions(threads));
    return new OrtDecoder(ort, session, cfg, mode);
  }

  /** The weights of the following calls, from one or more parts (host arrays are referenced, not copied). */
  setWeights(...parts: OrtWeights[]): void {
    this.weightFeeds = {};
    for (const w of parts) for (const [name, { data, dims }] of w) this.weightFeeds[name] = new this.ort.Tensor("float32", data, dims);
  }

  /**
   * Runs S new positions of B rows over a cache of Tc slots.
   * @param ids [B·S] token ids; cos/sin [B·S·d/2] rotary tables; bias [B·S·(Tc+S)] additive mask
   *   over the cache slots, then the new positions
   * @param cache the rows' cache (null: Tc = 0, the prompt step)
   * @param targets "states" sessions: [B·S] the token each position predicts (−1: none)
   */
  async step(ids: Int32Array, B: number, S: number, cos: Float32Array, sin: Float32Array, bias: Float32Array, cache: OrtCache | null, targets?: Int32Array): Promise<OrtStep> {
    const { ort, cfg } = this;
    const half = cfg.headDim / 2;
    const Tc = cache?.Tc ?? 0;
    const feeds: Record<string, Ort.Tensor> = {
      ...this.weightFeeds,
      ids: int64(ort, ids, [B, S]),
      cos: new ort.Tensor("float32", cos, [B, S, 1, half]),
      sin: new ort.Tensor("float32", sin, [B, S, 1, half]),
      bias: new ort.Tensor("float32", bias, [B, 1, S, Tc + S]),
    };
    const [K, d] = [cfg.numKvHeads, cfg.headDim];
    const empty = new Float32Array(0);
    if (this.mode === "states") {
      if (!targets) throw new Error("OrtDecoder.step: a states session needs targets");
      feeds["targets"] = int64(ort, targets, [B, S]);
    }
    for (let i = 0; i < cfg.numLayers; i++) {
      feeds[`past_k.${i}`] = new ort.Tensor("float32", cache ? cache.k[i]! : empty, [B, K, d, Tc]);
      feeds[`past_v.${i}`] = new ort.Tensor("float32", cache ? cache.v[i]! : empty, [B, K, Tc, d]);
    }
    const r = await this.session.run(feeds);
    const get = (n: string) => r[n]!.data as Float32Array;
    const layers = Array.from({ length: cfg.numLayers }, (_, i) => i);
    const kv = { k: layers.map((i) => get(`k.${i}`)), v: layers.map((i) => get(`v.${i}`)) };
    if (this.mode === "sample") return { logits: get("logits"), ...kv };
    return { x: [...layers, cfg.numLayers].map((i) => get(`x.${i}`)), lp: get("lp"), ent: get("ent"), ...kv };
  }

  async close(): Promise<void> {
    this.weightFeeds = {};
    await this.session.release();
  }
}

/** An int64 tensor of token ids (ONNX's index type) from an Int32Array. */
function int64(ort: OrtModule, a: Int32Array, dims: number[]): Ort.Tensor {
  return new ort.Tensor("int64", BigInt64Array.from(a, (t) => BigInt(t)), dims);
}

/** Session options of rlvr's graphs: `threads` intra-op threads, sequential, no spin-waiting. */
function sessionOptions(threads: number): Record<string, unknown> {
  return {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
    // No spin-waiting after a run: onnxruntime's idle threads would otherwise spin and take the
    // cores from jax-js's kernels that follow.
    extra: { session: { intra_op: { allow_spinning: "0" }, inter_op: { allow_spinning: "0" } } },
  };
}

/**
 * The head's backward (ort-graph.ts `headGradOnnx`) on onnxruntime: dL/dx of the last block's
 * output for a head without a LoRA adapter.
 */
export class OrtHeadGrad {
  private constructor(
    private readonly ort: OrtModule,
    private readonly session: Ort.InferenceSession,
    private readonly cfg: DecoderConfig,
  ) {}

  /** @returns null when onnxruntime-node is not installed */
  static async create(cfg: DecoderConfig, threads: number): Promise<OrtHeadGrad | null> {
    const ort = await loadOrt();
    if (!ort) return null;
    return new OrtHeadGrad(ort, await ort.InferenceSession.create(headGradOnnx(cfg), sessionOptions(threads)), cfg);
  }

  /**
   * @param w the base weights (`ortWeights`: norm and the head's matrix are read)
   * @param x [N·D] the last block's output; targets [N] (−1: none); cLp, cEnt [N] cotangents
   * @returns dx [N·D]
   */
  async run(w: OrtWeights, x: Float32Array, targets: Int32Array, cLp: Float32Array, cEnt: Float32Array): Promise<Float32Array> {
    const { ort, cfg } = this;
    const N = targets.length;
    const head = cfg.tieWordEmbeddings ? ortWeightNames.embed : ortWeightNames.lmHead;
    const weight = (name: string) => {
      const t = w.get(name);
      if (!t) throw new Error(`OrtHeadGrad: no weight ${name}`);
      return new ort.Tensor("float32", t.data, t.dims);
    };
    const r = await this.session.run({
      x: new ort.Tensor("float32", x, [N, cfg.hiddenSize]),
      [ortWeightNames.norm]: weight(ortWeightNames.norm),
      [head]: weight(head),
      targets: int64(ort, targets, [N]),
      c_lp: new ort.Tensor("float32", cLp, [N]),
      c_ent: new ort.Tensor("float32", cEnt, [N]),
    });
    return r["dx"]!.data as Float32Array;
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

/**
 * A translated jax-js program (ort-jaxpr.ts) as an onnxruntime session: `run` takes the program's
 * inputs in order (its traced constants are held here) and returns its outputs.
 */
export class OrtProgram {
  private constructor(
    private readonly ort: OrtModule,
    private readonly session: Ort.InferenceSession,
    private readonly program: OnnxProgram,
    private readonly consts: HostData[],
  ) {}

  /** @returns null when onnxruntime-node is not installed */
  static async create(program: OnnxProgram, consts: HostData[], threads: number): Promise<OrtProgram | null> {
    const ort = await loadOrt();
    if (!ort) return null;
    // No graph rewrites: onnxruntime's transpose optimizer re-merges the 2-D transposes the
    // translation emits into N-D ones (measured 3× the transpose time on a 13.6M model's gradient).
    return new OrtProgram(ort, await ort.InferenceSession.create(program.model, { ...sessionOptions(threads), graphOptimizationLevel: "disabled" }), program, consts);
  }

  /** @param args the program's arguments (`in.i`), host arrays of their dtypes and sizes */
  async run(args: HostData[]): Promise<HostData[]> {
    const { ort, program } = this;
    const values = [...this.consts, ...args];
    if (values.length !== program.inputs.length) throw new Error(`OrtProgram: ${args.length} arguments for ${program.inputs.length - this.consts.length} inputs`);
    const feeds: Record<string, Ort.Tensor> = {};
    program.inputs.forEach(({ name, shape, dtype }, i) => (feeds[name] = new ort.Tensor(dtype as "float32", values[i]!, shape)));
    const r = await this.session.run(feeds);
    return program.outputs.map(({ name }) => r[name]!.data as HostData);
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

/** `nativeJit(f)`: `f` on onnxruntime, asynchronous, with the sessions' `dispose`. */
export type NativeJit<F extends (...args: never[]) => unknown> = ((...args: Parameters<F>) => Promise<ReturnType<F>>) & { dispose(): Promise<void> };

/** A jax-js array's data as a host array onnxruntime reads (copied off a shared Wasm heap). Consumes `a`. */
async function hostData(a: np.Array): Promise<HostData> {
  const raw = (await a.data()) as HostData | Uint8Array;
  return ortReadable(a.dtype === "bool" && !(raw instanceof Uint8Array) ? Uint8Array.from(raw as Int32Array) : raw);
}

/**
 * `f` compiled for onnxruntime: like jax-js `jit`, traced once per argument shape signature
 * (`makeJaxpr`), then translated (ort-jaxpr.ts) and run as a native session. Arguments are
 * pytrees of jax-js arrays (consumed, as jax-js functions consume theirs); the result is the
 * same pytree `f` returns, as jax-js arrays. Sessions are kept per signature until `dispose`.
 * Used for the embedded engine's full-weight training step under native kernels.
 * @throws Error where onnxruntime-node is missing, or `f` uses a primitive without a translation
 */
export function nativeJit<F extends (...args: never[]) => JsTree<np.Array>>(f: F, threads: number): NativeJit<F> {
  const cache = new Map<string, Promise<{ prog: OrtProgram; out: tree.JsTreeDef; shapes: OnnxProgram["outputs"] }>>();
  const compile = async (args: Parameters<F>) => {
    const avals = tree.map((a: np.Array) => a.aval, args as unknown as JsTree<np.Array>);
    const { jaxpr, treedef } = makeJaxpr(f as unknown as (...a: unknown[]) => JsTree<np.Array>)(...(avals as unknown as unknown[]));
    const program = jaxprToOnnx(jaxpr);
    const consts = await Promise.all(jaxpr.consts.map((c) => hostData((c as unknown as np.Array).ref)));
    jaxpr.dispose();
    const prog = await OrtProgram.create(program, consts, threads);
    if (!prog) throw new Error("native training needs onnxruntime-node");
    return { prog, out: treedef, shapes: program.outputs };
  };
  const run = async (...args: Parameters<F>) => {
    const [leaves, def] = tree.flatten(args as unknown as JsTree<np.Array>);
    const key = def.toString() + leaves.map((a) => `${a.dtype}[${a.shape.join(",")}]`).join(";");
    let entry = cache.get(key);
    if (!entry) {
      cache.set(key, (entry = compile(args)));
      entry.catch(() => cache.delete(key)); // a failed translation is not kept (nor awaited by dispose)
    }
    const { prog, out, shapes } = await entry;
    const outs = await prog.run(await Promise.all(leaves.map(hostData)));
    // onnxruntime returns bool tensors as bytes; jax-js takes booleans as int32 data.
    const arrays = outs.map((d, i) => np.array((d instanceof Uint8Array ? Int32Array.from(d) : d) as Float32Array, { dtype: shapes[i]!.dtype as np.DType }).reshape(shapes[i]!.shape));
    return tree.unflatten(out, arrays) as ReturnType<F>;
  };
  return Object.assign(run, {
    dispose: async () => {
      for (const e of cache.values()) await (await e).prog.close();
      cache.clear();
    },
  });
}
