/**
 * Short-answer verifiers: normalised exact match and token F1 (SQuAD-style).
 */
import { answerStatement, clip, normalizeAnswer } from "./text.ts";
import type { Verdict } from "./types.ts";

export interface ShortAnswerOptions {
  /** Judge only the answer span (`<answer>`, `\boxed{}`, "answer is …") when one exists
   *  (default true); otherwise the whole response. A response that states different answers
   *  (`\boxed{3} or \boxed{4}`, two different `<answer>` tags) states none: it scores 0. */
  extract?: boolean;
  /** F1 at or above which `correct` is true (token F1 only; default 1 → exact token bag). */
  threshold?: number;
}

function span(response: string, opts: ShortAnswerOptions): string {
  if (opts.extract === false) return response;
  const a = answerStatement(response);
  return a === null ? response : "text" in a ? a.text : ""; // a hedge answers nothing
}

const refs = (reference: string | string[]) => (Array.isArray(reference) ? reference : [reference]).map(String);

/**
 * Exact match after SQuAD normalisation (lower case, no punctuation/articles, single spaces).
 * @param reference one reference or several (any match counts)
 */
export function verifyExactMatch(response: string, reference: string | string[], opts: ShortAnswerOptions = {}): Verdict {
  const got = span(response, opts);
  const n = normalizeAnswer(got);
  const hit = refs(reference).find((r) => normalizeAnswer(r) === n);
  return {
    correct: hit !== undefined,
    reward: hit !== undefined ? 1 : 0,
    extracted: got.trim(),
    reason: hit !== undefined ? "normalised exact match" : `"${clip(n, 40)}" matches no reference`,
  };
}

/**
 * Token-level F1 between normalised prediction and reference tokens (bag of tokens, SQuAD
 * convention: precision = common/pred, recall = common/ref; both empty → 1; one empty → 0).
 */
export function tokenF1(prediction: string, reference: string): number {
  const p = normalizeAnswer(prediction).split(" ").filter(Boolean);
  const r = normalizeAnswer(reference).split(" ").filter(Boolean);
  if (p.length === 0 || r.length === 0) return p.length === r.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of r) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of p) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      common++;
      counts.set(t, c - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / p.length;
  const recall = common / r.length;
  return (2 * precision * recall) / (precision + recall);
}

/**
 * Token F1 verifier: reward = best F1 over the references; correct when score ≥ threshold.
 */
export function verifyTokenF1(response: string, reference: string | string[], opts: ShortAnswerOptions = {}): Verdict {
  const got = span(response, opts);
  const score = Math.max(0, ...refs(reference).map((r) => tokenF1(got, r)));
  const threshold = opts.threshold ?? 1;
  return {
    correct: score >= threshold,
    reward: score,
    extracted: got.trim(),
    reason: `token F1 ${score.toFixed(3)} (threshold ${threshold})`,
  };
}
