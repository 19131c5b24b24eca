/**
 * The embedded engine's decoder (model.ts `decoder` + `lmHead`) written as an ONNX graph, so that
 * sampling can run on onnxruntime's native CPU kernels (ort-runtime.ts) where they are installed.
 *
 * One graph serves the prompt step and the decode steps: it takes S new positions of B rows and a
 * key/value cache of Tc slots per layer (Tc = 0 for the prompt step; slots the mask hides may hold
 * anything), and returns the logits of each row's last position [B, V] and the new positions'
 * keys/values only, which the caller writes into its preallocated cache (ort-runtime.ts): no step
 * copies the cache (keys are kept transposed, [B, K, d, Tc], so the score matmul reads them as is). The weights are graph inputs, not initializers, so a LoRA policy's merged
 * weights change between sampling calls without rebuilding the session. Linear weights are in the
 * Hugging Face layout [out, in] (Gemm transB; a tied head multiplies by the embedding the same way). Numerics follow model.ts op for op (RMSNorm, rotate-half rotary,
 * grouped-query attention with an additive mask, SwiGLU); ONNX opset 17.
 */
import onnxProto from "onnx-proto";
import type { DecoderConfig, LoraModule } from "./model.ts";

const { onnx } = onnxProto;
/** ONNX element types (TensorProto.DataType) used by rlvr's graphs. */
export const ONNX_TYPE = { float32: 1, int32: 6, int64: 7, bool: 9, float16: 10, float64: 11, uint32: 12 } as const;
const FLOAT = ONNX_TYPE.float32;
const INT64 = ONNX_TYPE.int64;

type Dim = number | string;
/** An attribute: an integer, integers, a string, or a float (`{ f }`: ONNX keeps the two apart). */
type Attr = number | number[] | string | { f: number };

/** Tensor names of the graph's weight inputs for layer `i` (and the model-wide ones). */
export const ortWeightNames = {
  embed: "embed",
  norm: "norm",
  lmHead: "lm_head",
  headA: "head_lora_a",
  headB: "head_lora_b",
  /** LoRA factors of a block module (internal orientation: A [in, r], B [r, out]). */
  lora: (i: number, module: LoraModule, which: "a" | "b") => `l${i}.${module}.lora_${which}`,
  layer: (i: number) => ({
    attnNorm: `l${i}.attn_norm`,
    wq: `l${i}.wq`,
    wk: `l${i}.wk`,
    wv: `l${i}.wv`,
    wo: `l${i}.wo`,
    bq: `l${i}.bq`,
    bk: `l${i}.bk`,
    bv: `l${i}.bv`,
    mlpNorm: `l${i}.mlp_norm`,
    wGate: `l${i}.w_gate`,
    wUp: `l${i}.w_up`,
    wDown: `l${i}.w_down`,
  }),
};

/** A small builder: each `op` appends one node and returns its (fresh) output name. */
export class Graph {
  readonly nodes: onnxProto.onnx.INodeProto[] = [];
  readonly inputs: onnxProto.onnx.IValueInfoProto[] = [];
  readonly outputs: onnxProto.onnx.IValueInfoProto[] = [];
  readonly inits: onnxProto.onnx.ITensorProto[] = [];
  private n = 0;

  op(type: string, inputs: string[], attrs: Record<string, Attr> = {}, output?: string): string {
    return this.opN(type, inputs, 1, attrs, output ? [output] : undefined)[0]!;
  }

  /** A node with `count` outputs (Split), their fresh names unless given. */
  opN(type: string, inputs: string[], count: number, attrs: Record<string, Attr> = {}, outputs?: string[]): string[] {
    const base = `${type.toLowerCase()}_${this.n++}`;
    const output = outputs ?? Array.from({ length: count }, (_, i) => (count === 1 ? base : `${base}_${i}`));
    const attribute = Object.entries(attrs).map(([name, v]) =>
      typeof v === "string"
        ? { name, type: onnx.AttributeProto.AttributeType.STRING, s: new TextEncoder().encode(v) }
        : Array.isArray(v)
          ? { name, type: onnx.AttributeProto.AttributeType.INTS, ints: v }
          : typeof v === "object"
            ? { name, type: onnx.AttributeProto.AttributeType.FLOAT, f: v.f }
            : { name, type: onnx.AttributeProto.AttributeType.INT, i: v },
    );
    this.nodes.push({ opType: type, input: inputs, output, attribute, name: output[0] });
    return output;
  }

  private info(name: string, elemType: number, dims: Dim[]): onnxProto.onnx.IValueInfoProto {
    return { name, type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })) } } } };
  }

  input(name: string, dims: Dim[], elemType: number = FLOAT): string {
    this.inputs.push(this.info(name, elemType, dims));
    return name;
  }

  output(name: string, dims: Dim[], elemType: number = FLOAT): void {
    this.outputs.push(this.info(name, elemType, dims));
  }

  ints(values: number[]): string {
    const name = `c${this.n++}`;
    this.inits.push({ name, dataType: INT64, dims: [values.length], int64Data: values });
    return name;
  }

  floats(values: number[]): string {
    const name = `c${this.n++}`;
    this.inits.push({ name, dataType: FLOAT, dims: [values.length], floatData: values });
    return name;
  }

  scalar(value: number): string {
    return this.typedScalar(value, FLOAT);
  }

  /** A scalar constant of an element type in ONNX_TYPE but float16 (bool and int32 travel as int32 data, as ONNX stores them; uint32 as uint64). */
  typedScalar(value: number, elemType: number): string {
    const name = `c${this.n++}`;
    const data =
      elemType === FLOAT ? { floatData: [value] }
      : elemType === ONNX_TYPE.float64 ? { doubleData: [value] }
      : elemType === INT64 ? { int64Data: [value] }
      : elemType === ONNX_TYPE.uint32 ? { uint64Data: [value] }
      : { int32Data: [elemType === ONNX_TYPE.bool ? Number(value !== 0) : value] };
    this.inits.push({ name, dataType: elemType, dims: [], ...data });
    return name;
  }
}

/**
 * The decoder graph for `cfg` as a serialized ONNX model.
 * Inputs: `ids` int64 [B, S]; `cos`, `sin` [B, S, 1, d/2] (rotary tables at each position);
 * `bias` [B, 1, S, Tc + S] (additive mask over the cache slots, then the new positions: 0 attend,
 * −1e9 masked); `past_k.i` [B, K, d, Tc], `past_v.i` [B, K, Tc, d] per layer; the weights by
 * `ortWeightNames` (float32; linear weights [out, in]; `lm_head` [V, D] only when the head is untied; `head_lora_a` [D, r], `head_lora_b` [r, V] only
 * with `headLora`).
 * Outputs: `logits` [B, V] of each row's last position; the new positions' `k.i` [B, K, d, S] and
 * `v.i` [B, K, S, d]. Mode "states" (the no-gradient forward of layer-by-layer training and
 * scoring) instead takes `targets` int64 [B, S] (−1: none) and returns every block's input `x.i`
 * and the last block's output `x.L` ([B·S, D] each, i = 0 … L) and per-position `lp`, `ent` [B·S]
 * of the targets (model.ts headLogprobs; lp 0 where the target is −1).
 * @param headLora the head carries a LoRA adapter, added as loraScale · (h A) B (model.ts `lmHead`)
 * @param blockLora block modules whose LoRA factors are inputs (`ortWeightNames.lora`), added the
 *   same way, so a frozen base needs no merged copy per policy version (others: merged or none)
 */
export function decoderOnnx(cfg: DecoderConfig, headLora: boolean, mode: "sample" | "states" = "sample", blockLora: readonly LoraModule[] = []): Uint8Array {
  const g = new Graph();
  const { hiddenSize: D, numHeads: H, numKvHeads: K, headDim: d, vocabSize: V } = cfg;
  const G = H / K;
  const half = d / 2;
  const ids = g.input("ids", ["B", "S"], INT64);
  const cos = g.input("cos", ["B", "S", 1, half]);
  const sin = g.input("sin", ["B", "S", 1, half]);
  const bias = g.input("bias", ["B", 1, "S", "T"]);
  const embed = g.input(ortWeightNames.embed, [V, D]);
  const eps = g.scalar(cfg.rmsNormEps);
  const ax = (v: number[]) => g.ints(v);
  const rms = (x: string, w: string) => g.op("Mul", [g.op("Mul", [x, g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [g.op("ReduceMean", [g.op("Mul", [x, x])], { axes: [-1], keepdims: 1 }), eps])])])]), w]);
  const rope = (x: string) => {
    const x1 = g.op("Slice", [x, ax([0]), ax([half]), ax([3])]);
    const x2 = g.op("Slice", [x, ax([half]), ax([d]), ax([3])]);
    const r1 = g.op("Sub", [g.op("Mul", [x1, cos]), g.op("Mul", [x2, sin])]);
    const r2 = g.op("Add", [g.op("Mul", [x2, cos]), g.op("Mul", [x1, sin])]);
    return g.op("Concat", [r1, r2], { axis: 3 });
  };
  const biasG = g.op("Unsqueeze", [bias, ax([3])]); // [B, 1, S, 1, T]
  const scale = g.scalar(1 / Math.sqrt(d));
  // Activations stay [B·S, D]; each linear layer is Gemm(h, W, transB) with W in the Hugging Face
  // layout [out, in]: onnxruntime packs a non-constant B operand on every call, and with transB it
  // packs far faster (16×576×49,152: 10.7 ms against 17.6 ms for x · W[in, out], 2 threads).
  const bs = g.op("Shape", [ids]); // [B, S]
  const shape = (parts: string[]) => g.op("Concat", parts, { axis: 0 });
  const lin = (h: string, w: string) => g.op("Gemm", [h, w], { transB: 1 });
  // A LoRA module: h Wᵀ + scale · (h A) B, the adapter's product as Gemm's bias input C.
  const loraLin = (i: number, module: LoraModule, h: string, w: string, dims: [number, number]) => {
    if (!blockLora.includes(module)) return lin(h, w);
    const a = g.input(ortWeightNames.lora(i, module, "a"), [dims[1], "R"]);
    const b = g.input(ortWeightNames.lora(i, module, "b"), ["R", dims[0]]);
    return g.op("Gemm", [g.op("MatMul", [h, a]), b, lin(h, w)], { alpha: { f: cfg.loraScale ?? 1 }, beta: { f: 1 } });
  };
  let x = g.op("Reshape", [g.op("Gather", [embed, ids], { axis: 0 }), ax([-1, D])]); // [B·S, D]
  const state = (i: number) => {
    if (mode !== "states") return;
    g.op("Identity", [x], {}, `x.${i}`);
    g.output(`x.${i}`, ["N", D]);
  };
  for (let i = 0; i < cfg.numLayers; i++) {
    state(i);
    const n = ortWeightNames.layer(i);
    for (const [name, dims] of [
      [n.attnNorm, [D]],
      [n.wq, [H * d, D]],
      [n.wk, [K * d, D]],
      [n.wv, [K * d, D]],
      [n.wo, [D, H * d]],
      [n.mlpNorm, [D]],
      [n.wGate, [cfg.intermediateSize, D]],
      [n.wUp, [cfg.intermediateSize, D]],
      [n.wDown, [D, cfg.intermediateSize]],
    ] as [string, number[]][])
      g.input(name, dims);
    const pastK = g.input(`past_k.${i}`, ["B", K, d, "Tc"]);
    const pastV = g.input(`past_v.${i}`, ["B", K, "Tc", d]);
    const h = rms(x, n.attnNorm);
    let q = loraLin(i, "q_proj", h, n.wq, [H * d, D]);
    let k = loraLin(i, "k_proj", h, n.wk, [K * d, D]);
    let v = loraLin(i, "v_proj", h, n.wv, [K * d, D]);
    if (cfg.attentionBias) {
      q = g.op("Add", [q, g.input(n.bq, [H * d])]);
      k = g.op("Add", [k, g.input(n.bk, [K * d])]);
      v = g.op("Add", [v, g.input(n.bv, [K * d])]);
    }
    q = rope(g.op("Reshape", [q, shape([bs, ax([H, d])])]));
    k = rope(g.op("Reshape", [k, shape([bs, ax([K, d])])]));
    v = g.op("Reshape", [v, shape([bs, ax([K, d])])]);
    // The new positions' keys [B, K, d, S] and values [B, K, S, d], in the cache's layouts.
    const kNew = g.op("Transpose", [k], { perm: [0, 2, 3, 1] }, `k.${i}`);
    const vNew = g.op("Transpose", [v], { perm: [0, 2, 1, 3] }, `v.${i}`);
    g.output(kNew, ["B", K, d, "S"]);
    g.output(vNew, ["B", K, "S", d]);
    // Grouped-query attention as model.ts `attend`: query head (k, g) reads kv head k; the scores
    // over the cache and over the new positions are separate matmuls (the cache is never copied
    // into one array with the new keys), and only the scores [B, K, S·G, Tc + S] are concatenated.
    const qg = g.op("Reshape", [g.op("Transpose", [g.op("Reshape", [q, ax([0, 0, K, G, d])])], { perm: [0, 2, 1, 3, 4] }), ax([0, 0, -1, d])]); // [B, K, S·G, d]
    const sc = g.op("Concat", [g.op("MatMul", [qg, pastK]), g.op("MatMul", [qg, kNew])], { axis: -1 }); // [B, K, S·G, Tc + S]
    const bkT = [g.op("Shape", [sc], { start: 0, end: 2 }), g.op("Shape", [sc], { start: 3, end: 4 })]; // [B, K], [Tc + S]
    const scores = g.op("Add", [g.op("Reshape", [g.op("Mul", [sc, scale]), shape([bkT[0]!, ax([-1, G]), bkT[1]!])]), biasG]); // [B, K, S, G, Tc + S]
    const probs = g.op("Reshape", [g.op("Softmax", [scores], { axis: -1 }), shape([bkT[0]!, ax([-1]), bkT[1]!])]); // [B, K, S·G, Tc + S]
    const tc = g.op("Shape", [pastV], { start: 2, end: 3 });
    const pCache = g.op("Slice", [probs, ax([0]), tc, ax([3])]);
    const pNew = g.op("Slice", [probs, tc, ax([2 ** 31 - 1]), ax([3])]);
    const ctxKv = g.op("Add", [g.op("MatMul", [pCache, pastV]), g.op("MatMul", [pNew, vNew])]); // [B, K, S·G, d]
    const ctx = g.op("Reshape", [g.op("Transpose", [g.op("Reshape", [ctxKv, ax([0, 0, -1, G, d])])], { perm: [0, 2, 1, 3, 4] }), ax([-1, H * d])]); // [B·S, H·d]
    x = g.op("Add", [x, loraLin(i, "o_proj", ctx, n.wo, [D, H * d])]);
    const m = rms(x, n.mlpNorm);
    const F = cfg.intermediateSize;
    const gate = loraLin(i, "gate_proj", m, n.wGate, [F, D]);
    const act = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]), loraLin(i, "up_proj", m, n.wUp, [F, D])]);
    x = g.op("Add", [x, loraLin(i, "down_proj", act, n.wDown, [D, F])]);
  }
  state(cfg.numLayers);
  // Sampling: each row's last position (prompts are left-padded, so it is real for every row);
  // states: every position.
  const last = mode === "sample" ? g.op("Reshape", [g.op("Slice", [g.op("Reshape", [x, shape([bs, ax([D])])]), ax([-1]), ax([2 ** 31 - 1]), ax([1])]), ax([-1, D])]) : x; // [B, D] or [B·S, D]
  const hN = rms(last, g.input(ortWeightNames.norm, [D]));
  let logits = cfg.tieWordEmbeddings ? g.op("Gemm", [hN, embed], { transB: 1 }) : lin(hN, g.input(ortWeightNames.lmHead, [V, D]));
  if (headLora) {
    const a = g.input(ortWeightNames.headA, [D, "R"]);
    const b = g.input(ortWeightNames.headB, ["R", V]);
    logits = g.op("Add", [logits, g.op("Mul", [g.op("MatMul", [g.op("MatMul", [hN, a]), b]), g.scalar(cfg.loraScale ?? 1)])]);
  }
  if (mode === "sample") {
    g.op("Identity", [logits], {}, "logits");
    g.output("logits", ["B", V]);
  } else {
    // Per-position log-prob of the target (0 where the target is −1) and entropy, as model.ts
    // headLogprobs: lp = log softmax(z)[target], ent = −Σ p log p.
    const targets = g.op("Reshape", [g.input("targets", ["B", "S"], INT64), ax([-1, 1])]);
    const logp = g.op("LogSoftmax", [logits], { axis: -1 });
    g.op("Neg", [g.op("ReduceSum", [g.op("Mul", [g.op("Exp", [logp]), logp]), ax([-1])], { keepdims: 0 })], {}, "ent");
    const has = g.op("Cast", [g.op("GreaterOrEqual", [targets, g.ints([0])])], { to: FLOAT });
    const picked = g.op("GatherElements", [logp, g.op("Max", [targets, g.ints([0])])], { axis: 1 });
    g.op("Reshape", [g.op("Mul", [picked, has]), ax([-1])], {}, "lp");
    g.output("lp", ["N"]);
    g.output("ent", ["N"]);
  }
  return encodeModel(g);
}

/** The serialized ONNX model (IR 8, opset 17) of a built graph. */
export function encodeModel(g: Graph): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: "rlvr",
    // onnxruntime's contrib domain where a node uses it (FusedMatMul: a batched product with transposed operands).
    opsetImport: [{ domain: "", version: 17 }, ...(g.nodes.some((n) => n.domain === "com.microsoft") ? [{ domain: "com.microsoft", version: 1 }] : [])],
    graph: { name: "rlvr", node: g.nodes, input: g.inputs, output: g.outputs, initializer: g.inits },
  });
  return onnx.ModelProto.encode(model).finish();
}

/**
 * The head's backward of layer-by-layer LoRA training (engine.ts `layerBackward`) as an ONNX
 * graph: the gradient with respect to the last block's output x of Σ cLp·lp + cEnt·ent, the
 * derivative model.ts `headCotangentSum` writes out, through the head and the final RMSNorm:
 * with p = softmax(z), z = RMSNorm(x) Wᵀ, H = −Σ p log p:
 *   dz = cLp·(onehot(target) − p·[target ≥ 0]) − cEnt·p ⊙ (log p + H),   dh = dz W,
 *   dx = r·(dh ⊙ w) − r³·x·mean((dh ⊙ w) ⊙ x),   r = (mean(x²) + eps)^(−1/2).
 * For a head without a LoRA adapter (its adapter's gradient needs jax-js's autodiff).
 * Inputs: `x` [N, D]; `norm` [D]; the head `embed` (tied) or `lm_head` [V, D]; `targets` int64 [N]
 * (−1: none); `c_lp`, `c_ent` [N]. Output: `dx` [N, D].
 */
export function headGradOnnx(cfg: DecoderConfig): Uint8Array {
  const g = new Graph();
  const { hiddenSize: D, vocabSize: V } = cfg;
  const ax = (v: number[]) => g.ints(v);
  const x = g.input("x", ["N", D]);
  const w = g.input(ortWeightNames.norm, [D]);
  const W = g.input(cfg.tieWordEmbeddings ? ortWeightNames.embed : ortWeightNames.lmHead, [V, D]);
  const t = g.input("targets", ["N"], INT64);
  const col = (name: string) => g.op("Unsqueeze", [g.input(name, ["N"]), ax([1])]); // [N, 1]
  const [cLp, cEnt] = [col("c_lp"), col("c_ent")];
  const r = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [g.op("ReduceMean", [g.op("Mul", [x, x])], { axes: [-1], keepdims: 1 }), g.scalar(cfg.rmsNormEps)])])]); // [N, 1]
  const h = g.op("Mul", [g.op("Mul", [x, r]), w]);
  const logp = g.op("LogSoftmax", [g.op("Gemm", [h, W], { transB: 1 })], { axis: -1 }); // [N, V]
  const p = g.op("Exp", [logp]);
  const H = g.op("Neg", [g.op("ReduceSum", [g.op("Mul", [p, logp]), ax([-1])], { keepdims: 1 })]); // [N, 1]
  const has = g.op("Unsqueeze", [g.op("Cast", [g.op("GreaterOrEqual", [t, g.ints([0])])], { to: FLOAT }), ax([1])]); // [N, 1]
  const onehot = g.op("Mul", [g.op("OneHot", [g.op("Max", [t, g.ints([0])]), g.ints([V]), g.floats([0, 1])], { axis: -1 }), has]);
  const dLp = g.op("Mul", [g.op("Sub", [onehot, g.op("Mul", [p, has])]), cLp]);
  const dEnt = g.op("Neg", [g.op("Mul", [g.op("Mul", [p, g.op("Add", [logp, H])]), cEnt])]);
  const u = g.op("Mul", [g.op("MatMul", [g.op("Add", [dLp, dEnt]), W]), w]); // dh ⊙ w, [N, D]
  const r3 = g.op("Mul", [g.op("Mul", [r, r]), r]);
  g.op("Sub", [g.op("Mul", [u, r]), g.op("Mul", [g.op("Mul", [x, r3]), g.op("ReduceMean", [g.op("Mul", [u, x])], { axes: [-1], keepdims: 1 })])], {}, "dx");
  g.output("dx", ["N", D]);
  return encodeModel(g);
}
