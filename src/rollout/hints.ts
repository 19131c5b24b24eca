/**
 * Guided hints (GHPO: Liu et al. 2025, "GHPO: Adaptive Guidance for Stable and Efficient LLM
 * Reinforcement Learning", arXiv:2507.10628). A group whose G responses are all wrong gives GRPO
 * no signal. For such groups, re-sample the group with a growing prefix of the reference solution
 * (`Example.solution ?? answer`) — fractions 0.25, 0.5, 0.75 by default — until some response is
 * correct; the first hinted group with a correct response replaces the original group. Groups that
 * stay at zero accuracy after the last fraction keep their original (unhinted) responses.
 *
 * Where the hint goes: at the start of the *response*, with loss mask 0 (our choice; GHPO appends
 * it to the prompt). The token sequence the model conditions on is the same either way (prompt,
 * then hint, then its own continuation), but as a response prefix (a) the verifier scores the
 * complete solution — hint + continuation — with the task's own verifier, unchanged, and (b) the
 * loss sees exactly which tokens are the model's: hint tokens have mask 0 (never trained, old
 * log-prob 0), continuation tokens mask 1. Hint tokens are ids from `tokenizer.encode(solution)`, so
 * a hint of h tokens is a token prefix of the solution (no re-tokenization at the seam).
 *
 * Hint length for fraction f of a solution of S tokens: round(f·S) clamped to [1, S − 1] (a hint
 * never gives the whole solution); a level whose length equals the previous level's is skipped;
 * solutions of one token get no hint. The continuation may use up to `maxNewTokens` tokens
 * (hinted responses can be longer than unhinted ones by the hint).
 */
import type { Engine } from "../core/engine.ts";
import type { Verdict } from "../tasks/types.ts";
import type { Example } from "../core/example.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { hash32 } from "../util/rng.ts";
import { concatF32, concatI32, sampleEach, type SamplingSettings, type Trajectory } from "./types.ts";

export interface HintOptions extends SamplingSettings {
  /** Hint lengths as fractions of the reference solution, tried in order (growing). Default [0.25, 0.5, 0.75]. */
  fractions?: readonly number[];
  /** Responses per group G (trajectories are prompt-major, G per prompt). */
  groupSize: number;
  /** Most sampled tokens per hinted continuation. */
  maxNewTokens: number;
  /** Longest prompt + response the model accepts (caps the continuation, with 3 tokens of slack for engines that pad prompts). */
  maxSeqLen: number;
}

export type BatchVerifier = (
  responses: readonly string[],
  examples: readonly Example[],
  info?: { lengths?: ArrayLike<number>; truncated?: ArrayLike<boolean>; groupIds?: ArrayLike<number>; step?: number },
) => Promise<{ verdicts: Verdict[]; events: Record<string, number> }>;

export interface HintResult {
  trajectories: Trajectory[];
  verdicts: Verdict[];
  /** Verifier events of the hinted re-samples (add them to the first pass's). */
  events: Record<string, number>;
  metrics: {
    /** Groups with zero accuracy before hints. */
    "hints/zero_acc_groups": number;
    /** Groups re-sampled with at least one hint. */
    "hints/hinted_groups": number;
    /** Groups a hint made non-zero (their hinted responses replaced the originals). */
    "hints/solved_groups": number;
    /** Mean hint fraction over solved groups (0 when none). */
    "hints/fraction_mean": number;
    /** Tokens sampled by the hinted re-samples (hint tokens excluded). */
    "hints/sampled_tokens": number;
    /** Hint tokens in the trajectories kept (mask 0). */
    "hints/hint_tokens": number;
  };
}

/** Hint length (tokens) for fraction f of an S-token solution; 0 = no hint possible. */
export function hintLength(f: number, S: number): number {
  if (S < 2) return 0;
  return Math.min(S - 1, Math.max(1, Math.round(f * S)));
}

/**
 * Replace zero-accuracy groups by hinted re-samples (see module doc).
 * @param trajectories prompts.length × G, prompt-major; `verdicts` aligned with them.
 * @returns new arrays (inputs are not modified), prompt-major, G per prompt.
 */
export async function applyHints(
  engine: Engine,
  tokenizer: Tokenizer,
  examples: readonly Example[],
  prompts: readonly Int32Array[],
  trajectories: readonly Trajectory[],
  verdicts: readonly Verdict[],
  verify: BatchVerifier,
  o: HintOptions,
): Promise<HintResult> {
  const G = o.groupSize;
  const fractions = o.fractions ?? [0.25, 0.5, 0.75];
  const trajs = [...trajectories];
  const vs = [...verdicts];
  const events: Record<string, number> = {};
  const zero: number[] = [];
  for (let p = 0; p < prompts.length; p++) if (vs.slice(p * G, (p + 1) * G).every((v) => !v.correct)) zero.push(p);
  const solution = new Map(zero.map((p) => [p, Int32Array.from(tokenizer.encode(examples[p]!.solution ?? examples[p]!.answer, { addSpecialTokens: false }))]));
  const lastLen = new Map<number, number>();
  const hinted = new Set<number>();
  let pending = zero.filter((p) => solution.get(p)!.length >= 2);
  let solved = 0;
  let fracSum = 0;
  let sampled = 0;
  for (let level = 0; level < fractions.length && pending.length > 0; level++) {
    const f = fractions[level]!;
    const round = pending.filter((p) => {
      const h = hintLength(f, solution.get(p)!.length);
      return h > 0 && h !== lastLen.get(p);
    });
    if (round.length === 0) continue;
    const items: { prefix: Int32Array; maxNewTokens: number }[] = [];
    const hints: Int32Array[] = [];
    for (const p of round) {
      const hint = solution.get(p)!.subarray(0, hintLength(f, solution.get(p)!.length));
      lastLen.set(p, hint.length);
      hinted.add(p);
      hints.push(hint);
      const prefix = concatI32(prompts[p]!, hint);
      for (let j = 0; j < G; j++) items.push({ prefix, maxNewTokens: Math.min(o.maxNewTokens, o.maxSeqLen - 3 - prefix.length) });
    }
    const conts = await sampleEach(engine, items, { ...o, seed: hash32(o.seed, 0x41, level) });
    const fresh: Trajectory[] = conts.map((c, i) => {
      const hint = hints[Math.floor(i / G)]!;
      const p = round[Math.floor(i / G)]!;
      sampled += c.tokens.length;
      return {
        promptIndex: p,
        tokens: concatI32(hint, c.tokens),
        logprobs: concatF32(new Float32Array(hint.length), c.logprobs),
        mask: concatF32(new Float32Array(hint.length), new Float32Array(c.tokens.length).fill(1)),
        stopReason: c.stopReason,
        sampledTokens: c.tokens.length,
        hintTokens: hint.length,
      };
    });
    const r = await verify(
      fresh.map((t) => tokenizer.decode(t.tokens)),
      fresh.map((t) => examples[t.promptIndex]!),
    );
    for (const [k, v] of Object.entries(r.events)) events[k] = (events[k] ?? 0) + v;
    const done = new Set<number>();
    round.forEach((p, g) => {
      if (!r.verdicts.slice(g * G, (g + 1) * G).some((v) => v.correct)) return;
      for (let j = 0; j < G; j++) {
        trajs[p * G + j] = fresh[g * G + j]!;
        vs[p * G + j] = r.verdicts[g * G + j]!;
      }
      done.add(p);
      solved++;
      fracSum += f;
    });
    pending = pending.filter((p) => !done.has(p));
  }
  let hintTokens = 0;
  for (const t of trajs) hintTokens += t.hintTokens ?? 0;
  return {
    trajectories: trajs,
    verdicts: vs,
    events,
    metrics: {
      "hints/zero_acc_groups": zero.length,
      "hints/hinted_groups": hinted.size,
      "hints/solved_groups": solved,
      "hints/fraction_mean": solved ? fracSum / solved : 0,
      "hints/sampled_tokens": sampled,
      "hints/hint_tokens": hintTokens,
    },
  };
}
