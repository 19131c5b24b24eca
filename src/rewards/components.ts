/**
 * Ready-made reward components for composeRewards().
 */
import type { RewardComponent, RewardValue, SampleContext } from "./compose.ts";
import type { VerifierPool } from "./pool/pool.ts";
import { dapoOverlongPenalty, type OverlongOptions } from "./shaping/overlong.ts";
import { cosineLengthReward, type CosineLengthOptions } from "./shaping/cosine.ts";

/**
 * A sample component that runs a named verifier on the pool (hard timeout, crash isolation).
 * @param args     builds the verifier's arguments from the sample, e.g.
 *                 `(s) => [s.response, s.example.answer]`
 * @param fallback reward on timeout / crash / error (default 0; null = skip the sample); each
 *                 failure is recorded as an event "verifier/timeouts" | "verifier/crashes" |
 *                 "verifier/errors"
 */
export function poolComponent<E = any>(
  pool: VerifierPool,
  opts: {
    name: string;
    verifier: string;
    args: (s: SampleContext<E>) => unknown[];
    weight?: number;
    fallback?: number | null;
    timeoutMs?: number;
    score?: (value: unknown) => number | null;
    gate?: RewardComponent["gate"];
  },
): RewardComponent<E> {
  return {
    name: opts.name,
    weight: opts.weight,
    gate: opts.gate,
    sample: async (s) => {
      const r = await pool.callScore(opts.verifier, opts.args(s), { timeoutMs: opts.timeoutMs, score: opts.score, fallback: opts.fallback });
      if (r.event) s.emit(r.event, r.message);
      return r.value;
    },
  };
}

/** A sample component from any in-process function of the sample (sync or async). */
export function sampleComponent<E = any>(
  name: string,
  fn: (s: SampleContext<E>) => RewardValue | Promise<RewardValue>,
  extra: Omit<RewardComponent<E>, "name" | "sample" | "group" | "batch"> = {},
): RewardComponent<E> {
  return { ...extra, name, sample: fn };
}

/**
 * Majority vote within a group (the pseudo-label of TTRL, Zuo et al. 2025, arXiv:2504.16084):
 * 1 when a response's answer equals the group's most frequent answer (ties: the answer that
 * appears first, as maj@k in ALGORITHMS.md), else 0; a response with no answer scores 0; a group with no answers scores 0.
 * @param answer extracts a comparable (normalised) answer, or null
 */
export function majorityVoteComponent<E = any>(opts: {
  name?: string;
  answer: (response: string, example: E) => string | null;
  weight?: number;
}): RewardComponent<E> {
  return {
    name: opts.name ?? "majority",
    weight: opts.weight,
    group: ({ group }) => {
      const answers = group.responses.map((r) => {
        try {
          return opts.answer(r, group.example);
        } catch {
          return null;
        }
      });
      const counts = new Map<string, number>();
      for (const a of answers) if (a !== null) counts.set(a, (counts.get(a) ?? 0) + 1);
      let best: string | null = null;
      let bestCount = 0;
      // Map iteration follows first appearance, so ties go to the earliest answer.
      for (const [a, c] of counts) {
        if (c > bestCount) {
          best = a;
          bestCount = c;
        }
      }
      return answers.map((a) => (best !== null && a === best ? 1 : 0));
    },
  };
}

/**
 * DAPO soft overlong punishment as a component (the sample's length in tokens; see
 * shaping/overlong.ts: a ramp to −factor at the cap, clamped at −factor beyond it). Add it with
 * weight 1 to a correctness component.
 */
export function overlongComponent(opts: OverlongOptions & { name?: string; weight?: number }): RewardComponent {
  return {
    name: opts.name ?? "overlong",
    weight: opts.weight,
    sample: (s) => dapoOverlongPenalty(s.length, opts),
  };
}

/**
 * Cosine length-scaled reward (Yeo et al. 2025) as a group component that reads correctness
 * from another component (value > 0 = correct; null stays null). Give that component weight 0.
 */
export function cosineComponent(opts: CosineLengthOptions & { name?: string; correctness: string; weight?: number }): RewardComponent {
  return {
    name: opts.name ?? "cosine",
    weight: opts.weight,
    group: ({ group, lengths, components }) => {
      const c = components[opts.correctness];
      if (!c) throw new Error(`cosine: no component named "${opts.correctness}"`);
      return lengths.map((len, i) => (c[i] === null ? null : cosineLengthReward(c[i]! > 0, len, opts, group.truncated?.[i] ?? false)));
    },
  };
}
