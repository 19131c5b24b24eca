/**
 * Lazy, typed access to the math answer verifier (src/rewards/math, see docs/rewards-math.md).
 * Loaded on first use so that the rest of the reward layer starts fast and works even where the
 * math module (and its CAS dependency) is absent; callers get a clear error then.
 */

import { z } from "zod";

/**
 * What the math verifier reads from an example: `answer`, the reference — a non-empty string (a bare answer such as
 * `\\frac{3}{4}`, or a full MATH / GSM8K solution whose `\\boxed{}` / `#### n` is taken) or a finite number. An empty
 * or missing reference is a data error: nothing could be graded against it.
 */
export const mathExampleSchema = z
  .object({
    answer: z.union([
      z.string().refine((s) => s.trim().length > 0, { message: "the reference answer is empty" }),
      z.number().finite(),
    ], { error: "expected the reference answer as a non-empty string or a number" }),
  })
  .passthrough();

/** The parts of the math verifier's result that the reward layer relies on. */
export interface MathVerdictLike {
  correct: boolean;
  extracted: string | null;
  normalizedAnswer: string | null;
  normalizedReference: string | null;
  reason: string;
  [extra: string]: unknown;
}

export interface MathAuditLike {
  n: number;
  accuracy: number;
  falseNegatives: unknown[];
  falsePositives: unknown[];
  [extra: string]: unknown;
}

export interface MathModule {
  verifyMath(response: string, reference: string, opts?: unknown): MathVerdictLike;
}

// Relative specifiers typed as string: tsc rewrites ".ts" to ".js" at run time in the compiled
// package (rewriteRelativeImportExtensions), and the module still loads lazily.
const MATH_INDEX: string = "./math/index.ts";
const MATH_AUDIT: string = "./math/audit.ts";

let mathModule: Promise<MathModule> | undefined;
let auditModule: Promise<{ auditMath(cases: unknown[]): MathAuditLike | Promise<MathAuditLike> }> | undefined;

/**
 * Import src/rewards/math/index.ts once.
 * @throws Error (on the returned promise) when the module cannot be loaded
 */
export function loadMath(): Promise<MathModule> {
  mathModule ??= import(MATH_INDEX).then(
    (m: Partial<MathModule>) => {
      if (typeof m.verifyMath !== "function") throw new Error("src/rewards/math/index.ts does not export verifyMath");
      return m as MathModule;
    },
    (e: unknown) => {
      mathModule = undefined;
      throw new Error(`math verifier unavailable (src/rewards/math): ${(e as Error).message}`);
    },
  );
  return mathModule;
}

/** Import src/rewards/math/audit.ts once (exports auditMath(cases)). */
export function loadMathAudit(): Promise<{ auditMath(cases: unknown[]): MathAuditLike | Promise<MathAuditLike> }> {
  auditModule ??= import(MATH_AUDIT).then(
    (m: { auditMath?: unknown }) => {
      if (typeof m.auditMath !== "function") throw new Error("src/rewards/math/audit.ts does not export auditMath");
      return m as { auditMath(cases: unknown[]): MathAuditLike };
    },
    (e: unknown) => {
      auditModule = undefined;
      throw new Error(`math audit unavailable (src/rewards/math/audit.ts): ${(e as Error).message}`);
    },
  );
  return auditModule;
}

/** Verify a math answer as a Verdict (async because the module loads lazily). Never throws: errors → incorrect. */
export async function verifyMathLazy(response: string, reference: string, opts?: unknown): Promise<MathVerdictLike & { reward: number }> {
  try {
    const v = (await loadMath()).verifyMath(response, reference, opts);
    return { ...v, reward: v.correct ? 1 : 0 };
  } catch (e) {
    return { correct: false, reward: 0, extracted: null, normalizedAnswer: null, normalizedReference: null, reason: `error: ${(e as Error).message}` };
  }
}
