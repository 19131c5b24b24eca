/**
 * Choosing the next token from logits: temperature, top-k, top-p (nucleus), greedy.
 * Pure TypeScript over one row of logits; the engine calls it per sequence per step.
 */
import type { Rng } from "../../util/rng.ts";

export interface TokenSamplingOptions {
  /** Softmax temperature; 0 = greedy (argmax). */
  temperature: number;
  /** Keep the topK most likely tokens (0 = off). */
  topK?: number;
  /** Nucleus: keep the smallest prefix of tokens by probability with mass >= topP (1 = off). */
  topP?: number;
}

/**
 * Samples one token from `logits[offset .. offset+V)`.
 * @returns the token id and its log-prob under softmax(logits / temperature) over the full
 *   vocabulary (for greedy decoding, temperature 1), in nats.
 * Source: Holtzman et al. 2020 (nucleus sampling, arXiv:1904.09751); Fan et al. 2018 (top-k).
 */
export function sampleToken(
  logits: Float32Array,
  offset: number,
  V: number,
  opts: TokenSamplingOptions,
  rng: Rng,
): { token: number; logprob: number } {
  const temp = opts.temperature > 0 ? opts.temperature : 1;
  let max = -Infinity;
  let argmax = 0;
  for (let i = 0; i < V; i++) {
    const z = logits[offset + i]!;
    if (z > max) {
      max = z;
      argmax = i;
    }
  }
  // log-sum-exp of z/temp in float64
  let sum = 0;
  const p = new Float64Array(V);
  for (let i = 0; i < V; i++) {
    const e = Math.exp((logits[offset + i]! - max) / temp);
    p[i] = e;
    sum += e;
  }
  const logZ = Math.log(sum);
  const lpOf = (t: number) => (logits[offset + t]! - max) / temp - logZ;
  if (opts.temperature <= 0) return { token: argmax, logprob: lpOf(argmax) };

  const topK = opts.topK ?? 0;
  const topP = opts.topP ?? 1;
  let candidates: number[] | null = null;
  if ((topK > 0 && topK < V) || topP < 1) {
    const order = Array.from({ length: V }, (_, i) => i).sort((a, b) => p[b]! - p[a]! || a - b);
    let keep = topK > 0 ? Math.min(topK, V) : V;
    if (topP < 1) {
      let mass = 0;
      let n = 0;
      for (; n < keep; n++) {
        mass += p[order[n]!]! / sum;
        if (mass >= topP) {
          n++;
          break;
        }
      }
      keep = Math.max(1, Math.min(keep, n));
    }
    candidates = order.slice(0, keep);
  }
  if (candidates) {
    let cs = 0;
    for (const t of candidates) cs += p[t]!;
    let u = rng.next() * cs;
    for (const t of candidates) {
      u -= p[t]!;
      if (u <= 0) return { token: t, logprob: lpOf(t) };
    }
    const last = candidates[candidates.length - 1]!;
    return { token: last, logprob: lpOf(last) };
  }
  let u = rng.next() * sum;
  for (let i = 0; i < V; i++) {
    u -= p[i]!;
    if (u <= 0) return { token: i, logprob: lpOf(i) };
  }
  return { token: argmax, logprob: lpOf(argmax) };
}
