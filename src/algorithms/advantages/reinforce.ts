/**
 * REINFORCE++ estimators (Hu et al. 2025, "REINFORCE++: A Simple and Efficient Approach for
 * Aligning Large Language Models", arXiv:2501.03262): advantages normalised over the whole batch
 * instead of per prompt.
 */
import { z } from "zod";
import { registerAdvantage } from "../registry.ts";
import type { AdvantageInput, AdvantageOptions } from "../types.ts";
import { checkInput, groupBy, groupMean, numOpt, scorable } from "./groups.ts";

/**
 * Whiten values in place over the entries with `use[i]`: (x − μ)/sqrt(var_unbiased + eps), with
 * var_unbiased = var·N/(N−1). N < 2 leaves x − μ unscaled.
 */
function whiten(x: Float64Array, use: (i: number) => boolean, eps: number): void {
  let n = 0;
  let s = 0;
  for (let i = 0; i < x.length; i++) if (use(i)) { n++; s += x[i]!; }
  if (n === 0) return;
  const mu = s / n;
  let v = 0;
  for (let i = 0; i < x.length; i++) if (use(i)) v += (x[i]! - mu) ** 2;
  const scale = n > 1 ? 1 / Math.sqrt(v / (n - 1) + eps) : 1;
  for (let i = 0; i < x.length; i++) if (use(i)) x[i] = (x[i]! - mu) * scale;
}

/** Options of `reinforce_pp_baseline`. */
export const reinforcePpBaselineOptionsSchema = z.looseObject({ eps: z.number().min(0).default(1e-8) });

/**
 * REINFORCE++-baseline: x_b = s_b − mean_g, then whitened over the scorable samples of the batch,
 * A_b = (x_b − μ)/sqrt(var·N/(N−1) + eps).
 * @param options eps (default 1e-8).
 * @returns Float32Array[B]; singleton groups use mean 0; NaN rewards get 0 and are left out of μ, var.
 * Pinned by golden cases.advantages.reinforce_pp_baseline (all groups form one batch).
 */
export function reinforcePpBaselineAdvantages(input: AdvantageInput, options: AdvantageOptions = {}): Float32Array {
  const B = checkInput(input, "reinforce_pp_baseline");
  const eps = numOpt(options, "eps", 1e-8, "reinforce_pp_baseline");
  const r = input.rewards;
  const x = new Float64Array(B);
  const ok = new Uint8Array(B);
  for (const idx of groupBy(r, input.groupIds).members) {
    const mu = groupMean(r, idx);
    for (const i of idx) { x[i] = r[i]! - mu; ok[i] = 1; }
  }
  whiten(x, (i) => ok[i] === 1, eps);
  return Float32Array.from(x);
}

/** Options of `reinforce_pp`. */
export const reinforcePpOptionsSchema = z.looseObject({
  gamma: z.number().min(0).max(1).default(1),
  eps: z.number().min(0).default(1e-8),
  whiten: z.boolean().default(true),
});

/**
 * REINFORCE++ (token level): token rewards r_t = tokenRewards[b,t] (e.g. −β·KL, from
 * `klPenaltyPerToken`) plus the outcome reward s_b on the sequence's last masked token; discounted
 * return R_t = r_t + γ R_{t+1} over the masked tokens (unmasked tokens, e.g. tool output, are
 * skipped); then whitened over all masked tokens of scorable sequences, (R − μ)/sqrt(var_unbiased + eps).
 * @param input   rewards [B] (NaN = unscorable: all its tokens get 0), mask [B*T], seqLen T,
 *                tokenRewards [B*T] optional.
 * @param options gamma (default 1), eps (1e-8), whiten (true).
 * @returns Float32Array[B*T], 0 off the mask.
 * @throws TypeError when mask/seqLen are missing or sized wrong.
 * Pinned by advantages.test.ts ("reinforce_pp").
 */
export function reinforcePpAdvantages(input: AdvantageInput, options: AdvantageOptions = {}): Float32Array {
  const B = checkInput(input, "reinforce_pp");
  const { mask, seqLen: T } = input;
  if (!mask || T === undefined) throw new TypeError("reinforce_pp: needs input.mask (Float32Array[B*T]) and input.seqLen (T)");
  if (mask.length !== B * T) throw new RangeError(`reinforce_pp: mask has length ${mask.length}, expected B*T = ${B * T}`);
  const tr = input.tokenRewards;
  if (tr && tr.length !== B * T) throw new RangeError(`reinforce_pp: tokenRewards has length ${tr.length}, expected B*T = ${B * T}`);
  const gamma = numOpt(options, "gamma", 1, "reinforce_pp");
  const eps = numOpt(options, "eps", 1e-8, "reinforce_pp");
  const doWhiten = options["whiten"] === undefined ? true : Boolean(options["whiten"]);
  const R = new Float64Array(B * T);
  const use = new Uint8Array(B * T);
  for (let b = 0; b < B; b++) {
    const s = input.rewards[b]!;
    if (!scorable(s)) continue;
    let ret = 0;
    let last = true;
    for (let t = T - 1; t >= 0; t--) {
      const i = b * T + t;
      if (!(mask[i]! > 0)) continue;
      let rt = tr ? tr[i]! : 0;
      if (last) { rt += s; last = false; }
      ret = rt + gamma * ret;
      R[i] = ret;
      use[i] = 1;
    }
  }
  if (doWhiten) whiten(R, (i) => use[i] === 1, eps);
  return Float32Array.from(R);
}

registerAdvantage("reinforce_pp_baseline", reinforcePpBaselineAdvantages, { schema: reinforcePpBaselineOptionsSchema });
registerAdvantage("reinforce_pp", reinforcePpAdvantages, { level: "token", schema: reinforcePpOptionsSchema, needsGroups: false });
