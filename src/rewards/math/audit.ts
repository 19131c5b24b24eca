/**
 * Audit the math verifier on labelled cases: accuracy, false negatives (labelled equivalent, judged not)
 * and false positives (labelled not equivalent, judged equivalent). The CLI `rlvr verify-audit` wraps this.
 */
import { verifyMath } from "./index.ts";
import type { MathVerdict, MathVerifyOptions } from "./types.ts";

/** One labelled case, as in test/fixtures/math/cases.jsonl. */
export interface MathCase {
  response: string;
  reference: string;
  equivalent: boolean;
  category?: string;
}

/** A case the verifier got wrong, with its verdict. */
export interface MathMiss extends MathCase {
  verdict: MathVerdict;
}

/** Result of {@link auditMath}. */
export interface MathAudit {
  /** Number of cases. */
  n: number;
  /** Fraction of cases judged as labelled, in [0, 1] (1 for n = 0). */
  accuracy: number;
  /** Labelled equivalent, judged not equivalent. */
  falseNegatives: MathMiss[];
  /** Labelled not equivalent, judged equivalent. */
  falsePositives: MathMiss[];
  /** Accuracy per category (cases without one count under "uncategorised"). */
  byCategory: Record<string, { n: number; correct: number }>;
  /** Wall time of all verifications, milliseconds. */
  elapsedMs: number;
}

/**
 * Run {@link verifyMath} on every case and compare with its label.
 * @param cases labelled cases; entries whose fields have the wrong types count as misses with reason "bad case".
 * @param opts verifier options applied to every case.
 * @returns counts, accuracy and the misses, each with the verdict (reason, normalised forms). Never throws.
 */
export function auditMath(cases: readonly MathCase[], opts: MathVerifyOptions = {}): MathAudit {
  const falseNegatives: MathMiss[] = [];
  const falsePositives: MathMiss[] = [];
  const byCategory: Record<string, { n: number; correct: number }> = {};
  const t0 = performance.now();
  let correct = 0;
  for (const c of cases) {
    const cat = c.category ?? "uncategorised";
    const bucket = (byCategory[cat] ??= { n: 0, correct: 0 });
    bucket.n++;
    const verdict: MathVerdict =
      typeof c.response === "string" && typeof c.reference === "string"
        ? verifyMath(c.response, c.reference, opts)
        : { correct: false, extracted: null, normalizedAnswer: null, normalizedReference: null, reason: "bad case" };
    if (verdict.correct === c.equivalent) {
      correct++;
      bucket.correct++;
    } else if (c.equivalent) falseNegatives.push({ ...c, verdict });
    else falsePositives.push({ ...c, verdict });
  }
  return {
    n: cases.length,
    accuracy: cases.length === 0 ? 1 : correct / cases.length,
    falseNegatives,
    falsePositives,
    byCategory,
    elapsedMs: performance.now() - t0,
  };
}
