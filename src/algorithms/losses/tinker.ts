/**
 * The Tinker API's built-in losses (Thinking Machines, "Loss functions" in the Tinker docs), over
 * Tinker's per-datum inputs: every array is aligned with `target_tokens`, position i holds the
 * data of the token predicted after input position i (next-token alignment), and the loss is the
 * SUM over all positions of all datums (no normalisation; the caller scales `weights` or
 * `advantages` to normalise).
 *
 * Notation: lp = log p_θ(target_i | input_{≤i}) (the target log-probs, nats), q = `logprobs`
 * (the sampler's log-probs), A = `advantages`, w = `weights`, r = exp(lp − q).
 *   cross_entropy        ℓ = −Σ w·lp
 *   importance_sampling  ℓ = −Σ r·A
 *   ppo                  ℓ = −Σ min(r·A, clamp(r, lo, hi)·A)          lo, hi default 0.8, 1.2
 *   cispo                ℓ = −Σ sg(clamp(r, lo, hi))·lp·A             lo, hi default 0.8, 1.2
 *   dro                  ℓ = −Σ (lp·A − β/2·(lp − q)²)                 β required
 * `lo`/`hi` come from the config keys `clip_low_threshold` / `clip_high_threshold`, or per token
 * from loss inputs of the same names (a per-datum threshold broadcast over its positions).
 * Each loss returns ℓ and dℓ/dlp per position; all arithmetic is float64.
 */

/** Inputs of one call, positions of all datums concatenated: every array has the same length N. */
export interface TinkerLossInputs {
  /** Target log-probs under the policy being trained, nats, [N]. */
  targetLogprobs: Float64Array;
  /** The loss_fn_inputs by name (`weights`, `logprobs`, `advantages`, `clip_low_threshold`, …), each [N]. */
  inputs: Record<string, Float64Array>;
  /** loss_fn_config (numbers only), e.g. { clip_low_threshold: 0.8, beta: 0.05 }. */
  config: Record<string, number>;
}

/** A Tinker loss's value, its gradient and its metrics. */
export interface TinkerLossOutput {
  /** ℓ, summed over positions. */
  loss: number;
  /** dℓ/dlp, [N]. */
  grad: Float64Array;
  /** Per-position loss terms (their sum is `loss`), [N]. */
  elementwise: Float64Array;
}

/** A Tinker loss function and the loss_fn_inputs it requires besides target_tokens. */
export interface TinkerLossEntry {
  fn: (x: TinkerLossInputs) => TinkerLossOutput;
  requires: string[];
  /** Config keys it reads (any other key is an error). */
  configKeys: string[];
}

const TINKER_LOSSES = new Map<string, TinkerLossEntry>();

/** Register a Tinker loss under `name` (the `loss_fn` string clients send). @throws on a duplicate name. */
export function registerTinkerLoss(name: string, entry: TinkerLossEntry): void {
  if (TINKER_LOSSES.has(name)) throw new Error(`tinker loss "${name}" is already registered`);
  TINKER_LOSSES.set(name, entry);
}

/** The Tinker loss named `name`. @throws naming the registered ones when unknown. */
export function getTinkerLoss(name: string): TinkerLossEntry {
  const e = TINKER_LOSSES.get(name);
  if (!e) throw new Error(`unknown loss_fn "${name}": rlvr's Tinker server supports ${listTinkerLosses().join(", ")}`);
  return e;
}

/** Names of the registered Tinker losses. */
export function listTinkerLosses(): string[] {
  return [...TINKER_LOSSES.keys()].sort();
}

/**
 * Evaluate a registered Tinker loss after checking its inputs: every required input present, all
 * arrays of length N, every config key known.
 * @throws Error naming the missing input, the bad length or the unknown config key.
 */
export function tinkerLoss(name: string, x: TinkerLossInputs): TinkerLossOutput {
  const e = getTinkerLoss(name);
  const n = x.targetLogprobs.length;
  for (const k of e.requires) if (!x.inputs[k]) throw new Error(`loss_fn ${name}: loss_fn_inputs.${k} is required`);
  for (const [k, v] of Object.entries(x.inputs)) if (v.length !== n) throw new Error(`loss_fn ${name}: loss_fn_inputs.${k} has ${v.length} values, target_tokens has ${n}`);
  for (const k of Object.keys(x.config)) if (!e.configKeys.includes(k)) throw new Error(`loss_fn ${name}: unknown loss_fn_config key "${k}" (known: ${e.configKeys.join(", ") || "none"})`);
  return e.fn(x);
}

function out(n: number): TinkerLossOutput {
  return { loss: 0, grad: new Float64Array(n), elementwise: new Float64Array(n) };
}

function finish(o: TinkerLossOutput): TinkerLossOutput {
  let s = 0;
  for (const v of o.elementwise) s += v;
  o.loss = s;
  return o;
}

/** Clip thresholds at position i: per-token input, else config, else default. */
function thresholds(x: TinkerLossInputs): (i: number) => [number, number] {
  const lo = x.inputs["clip_low_threshold"];
  const hi = x.inputs["clip_high_threshold"];
  const clo = x.config["clip_low_threshold"] ?? 0.8;
  const chi = x.config["clip_high_threshold"] ?? 1.2;
  return (i) => [lo ? lo[i]! : clo, hi ? hi[i]! : chi];
}

/** cross_entropy: ℓ = −Σ w·lp; dℓ/dlp = −w. */
export function tinkerCrossEntropy(x: TinkerLossInputs): TinkerLossOutput {
  const o = out(x.targetLogprobs.length);
  const w = x.inputs["weights"]!;
  for (let i = 0; i < o.grad.length; i++) {
    if (w[i] === 0) continue;
    o.elementwise[i] = -w[i]! * x.targetLogprobs[i]!;
    o.grad[i] = -w[i]!;
  }
  return finish(o);
}

/**
 * The per-token loop the advantage-weighted losses share: for every position with A ≠ 0, `term`
 * gets the target log-prob lp, the sampler's q, A and the clip bounds, and returns
 * [elementwise loss, dℓ/dlp]; positions with A = 0 contribute nothing.
 */
function advantageLoss(x: TinkerLossInputs, term: (lp: number, q: number, a: number, lo: number, hi: number) => [number, number]): TinkerLossOutput {
  const o = out(x.targetLogprobs.length);
  const q = x.inputs["logprobs"]!;
  const A = x.inputs["advantages"]!;
  const th = thresholds(x);
  for (let i = 0; i < o.grad.length; i++) {
    if (A[i] === 0) continue;
    const [lo, hi] = th(i);
    [o.elementwise[i], o.grad[i]] = term(x.targetLogprobs[i]!, q[i]!, A[i]!, lo, hi);
  }
  return finish(o);
}

/** importance_sampling: ℓ = −Σ r·A; dℓ/dlp = −r·A. */
export function tinkerImportanceSampling(x: TinkerLossInputs): TinkerLossOutput {
  return advantageLoss(x, (lp, q, a) => {
    const r = Math.exp(lp - q);
    return [-r * a, -r * a];
  });
}

/** ppo: ℓ = −Σ min(r·A, clamp(r, lo, hi)·A); the gradient is −r·A where the unclipped term is the min, else 0. */
export function tinkerPpo(x: TinkerLossInputs): TinkerLossOutput {
  return advantageLoss(x, (lp, q, a, lo, hi) => {
    const r = Math.exp(lp - q);
    const unclipped = r * a;
    const clipped = Math.min(hi, Math.max(lo, r)) * a;
    return [-Math.min(unclipped, clipped), unclipped <= clipped ? -r * a : 0];
  });
}

/** cispo: ℓ = −Σ sg(clamp(r, lo, hi))·lp·A; dℓ/dlp = −clamp(r, lo, hi)·A. */
export function tinkerCispo(x: TinkerLossInputs): TinkerLossOutput {
  return advantageLoss(x, (lp, q, a, lo, hi) => {
    const w = Math.min(hi, Math.max(lo, Math.exp(lp - q)));
    return [-w * lp * a, -w * a];
  });
}

/** dro: ℓ = −Σ (lp·A − β/2·(lp − q)²); dℓ/dlp = −A + β·(lp − q). */
export function tinkerDro(x: TinkerLossInputs): TinkerLossOutput {
  const beta = x.config["beta"];
  if (beta === undefined || !Number.isFinite(beta)) throw new Error("loss_fn dro: loss_fn_config.beta (a number) is required");
  const o = out(x.targetLogprobs.length);
  const q = x.inputs["logprobs"]!;
  const A = x.inputs["advantages"]!;
  for (let i = 0; i < o.grad.length; i++) {
    const lp = x.targetLogprobs[i]!;
    const d = lp - q[i]!;
    if (A[i] === 0 && d === 0) continue;
    o.elementwise[i] = -(lp * A[i]! - 0.5 * beta * d * d);
    o.grad[i] = -A[i]! + beta * d;
  }
  return finish(o);
}

const CLIP_KEYS = ["clip_low_threshold", "clip_high_threshold"];
registerTinkerLoss("cross_entropy", { fn: tinkerCrossEntropy, requires: ["weights"], configKeys: [] });
registerTinkerLoss("importance_sampling", { fn: tinkerImportanceSampling, requires: ["logprobs", "advantages"], configKeys: [] });
registerTinkerLoss("ppo", { fn: tinkerPpo, requires: ["logprobs", "advantages"], configKeys: CLIP_KEYS });
registerTinkerLoss("cispo", { fn: tinkerCispo, requires: ["logprobs", "advantages"], configKeys: CLIP_KEYS });
registerTinkerLoss("dro", { fn: tinkerDro, requires: ["logprobs", "advantages"], configKeys: ["beta"] });
