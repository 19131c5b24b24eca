/**
 * Entry points for advantages: compute by registered name, and broadcast sequence advantages over
 * tokens. Importing this module registers the built-in estimators.
 */
import "./group-estimators.ts";
import "./reinforce.ts";
import { getAdvantage } from "../registry.ts";
import type { AdvantageInput, AdvantageOptions, NumArray } from "../types.ts";

export * from "./group-estimators.ts";
export * from "./reinforce.ts";

function checkOutput(name: string, out: Float32Array, expected: number): Float32Array {
  if (!(out instanceof Float32Array) || out.length !== expected) {
    throw new TypeError(`advantage estimator "${name}" returned ${out?.constructor?.name ?? typeof out}[${(out as { length?: number })?.length}], expected Float32Array[${expected}]`);
  }
  return out;
}

/**
 * Sequence advantages by estimator name.
 * @param name     a registered sequence-level estimator ("grpo", "rloo", ... or your own).
 * @param input    rewards [B] (NaN = unscorable → 0), groupIds [B], optional lengths/strata.
 * @param options  the estimator's options (the config's `advantage` block; `name` is ignored).
 * @returns Float32Array[B].
 * @throws Error for unknown names (listing the registered ones) or a token-level estimator (use
 *         `computeTokenAdvantages`).
 */
export function computeAdvantages(name: string, input: AdvantageInput, options: AdvantageOptions = {}): Float32Array {
  const e = getAdvantage(name);
  if (e.level !== "sequence") {
    throw new Error(`advantage estimator "${name}" is token-level; call computeTokenAdvantages(name, {...input, mask, seqLen}, options)`);
  }
  return checkOutput(name, e.fn(input, options), input.rewards.length);
}

/**
 * Per-token advantages by estimator name, for any estimator: sequence-level results are broadcast
 * over the mask, token-level ones returned as they are.
 * @param input  as `computeAdvantages`, plus mask [B*T] and seqLen T.
 * @returns Float32Array[B*T], 0 where mask is 0.
 * @throws TypeError when mask/seqLen are missing.
 */
export function computeTokenAdvantages(name: string, input: AdvantageInput, options: AdvantageOptions = {}): Float32Array {
  const { mask, seqLen } = input;
  if (!mask || seqLen === undefined) throw new TypeError(`computeTokenAdvantages("${name}"): needs input.mask (Float32Array[B*T]) and input.seqLen (T)`);
  const B = input.rewards.length;
  const e = getAdvantage(name);
  if (e.level === "token") {
    const out = checkOutput(name, e.fn(input, options), B * seqLen);
    for (let i = 0; i < out.length; i++) if (!(mask[i]! > 0)) out[i] = 0;
    return out;
  }
  return broadcastToTokens(checkOutput(name, e.fn(input, options), B), mask, seqLen);
}

/**
 * Broadcast sequence advantages over tokens: out[b*T+t] = adv[b] where mask > 0, else 0.
 * @param adv   Float32Array[B].
 * @param mask  [B*T] loss mask.
 * @param seqLen T.
 * @throws RangeError when mask.length ≠ B*T.
 */
export function broadcastToTokens(adv: NumArray, mask: NumArray, seqLen: number): Float32Array {
  const B = adv.length;
  if (mask.length !== B * seqLen) throw new RangeError(`broadcastToTokens: mask has length ${mask.length}, expected B*T = ${B}*${seqLen}`);
  const out = new Float32Array(B * seqLen);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < seqLen; t++) {
      const i = b * seqLen + t;
      if (mask[i]! > 0) out[i] = adv[b]!;
    }
  }
  return out;
}
