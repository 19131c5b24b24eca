import { mathjsBackend, type CasBackend } from "./cas.ts";

/**
 * Public types and defaults of the math answer verifier (src/rewards/math).
 * See docs/rewards-math.md for how extraction and equivalence work.
 */

/** Where an answer can be found in a model response, tried in the order given. */
export type ExtractionMode =
  | "answerTag" // last <answer>...</answer> block (a \boxed{} inside it wins)
  | "boxed" // last \boxed{...} or \fbox{...}, nested braces allowed
  | "gsm8k" // last "#### n" line (GSM8K)
  | "answerIs" // last "the (final) answer is ..." / "Answer: ..."
  | "bareAnswer" // the whole response when it is short and has no prose (e.g. "x = 3", "\\frac{1}{2}")
  | "lastNumber"; // last number in the text (fallback, see `lastNumberFallback`)

/** How `%` is treated. "flexible": `50\%` equals both `50` and `0.5`; "strict": `50\%` is 0.5 only; "ignore": `%` is dropped (50). */
export type PercentMode = "flexible" | "strict" | "ignore";

/** Options of {@link verifyMath}, {@link extractAnswer} and {@link mathEquivalent}. Every field is optional. */
export interface MathVerifyOptions {
  /** Extraction modes, tried in order; the first that finds something wins. Default: answerTag, boxed, gsm8k, answerIs, bareAnswer, lastNumber. */
  extraction?: ExtractionMode[];
  /** Allow the "lastNumber" mode at all (it is only a fallback). Default true. */
  lastNumberFallback?: boolean;
  /** Drop `<think>...</think>` blocks before extracting from a response (unless nothing else is left). Default true. */
  ignoreThink?: boolean;
  /** Extract from the reference when it is a full solution (`\boxed{}`, `#### n`, `<answer>`); otherwise use it whole. Default true. */
  extractReference?: boolean;
  /** Strip trailing units (`5\text{ cm}`, `12 dollars`, `3 square feet`) and currency signs. Default true. */
  stripUnits?: boolean;
  /** Percent handling. Default "flexible". */
  percent?: PercentMode;
  /** Relative tolerance for values that are not exact rationals (irrationals, floats, CAS probes). Default 1e-9. */
  relTol?: number;
  /** Absolute tolerance, used near zero. Default 1e-12. */
  absTol?: number;
  /**
   * A decimal response (e.g. `0.333`, `3.14`) matches a reference that has no finite decimal expansion (`1/3`, `\pi`)
   * when it equals the reference rounded to the same number of decimals and has at least this many significant digits.
   * 0 turns it off. Default 3.
   */
  roundedDecimalDigits?: number;
  /** Bare comma lists (`1, 2`) compare order-insensitively (they are "multiple answers"). Default true. */
  unorderedLists?: boolean;
  /** Answers longer than this (characters, after extraction) are compared as text only; bounds parsing time. Default 400. */
  maxAnswerLength?: number;
  /** Number of random points at which expressions with free variables are probed through the CAS. Default 6. */
  probePoints?: number;
  /** The CAS backend that compiles and evaluates non-rational expressions. Default: mathjs ({@link mathjsBackend}). */
  cas?: CasBackend;
}

/** Result of {@link verifyMath}. */
export interface MathVerdict {
  /** The extracted response answer is equivalent to the reference answer. */
  correct: boolean;
  /** The raw answer extracted from the response, or null when none was found. */
  extracted: string | null;
  /** The extracted answer after LaTeX/unit normalisation, or null. */
  normalizedAnswer: string | null;
  /** The reference answer after extraction and normalisation, or null. */
  normalizedReference: string | null;
  /** Why: which extraction mode was used and which comparison decided (or what failed). */
  reason: string;
}

/** Result of {@link extractAnswer}. */
export interface ExtractedAnswer {
  /** The answer text (without the \boxed{} / tags around it). */
  answer: string;
  /** The mode that found it. */
  mode: ExtractionMode | "whole";
}

/** Result of {@link mathEquivalent}. */
export interface Equivalence {
  equivalent: boolean;
  /** Which rule decided, e.g. "exact rational", "numeric within tolerance", "cas probe (6 points)". */
  reason: string;
  normalizedA: string;
  normalizedB: string;
}

/** Options with every default filled in. */
export type ResolvedMathOptions = Required<MathVerifyOptions>;

export const DEFAULT_EXTRACTION: readonly ExtractionMode[] = ["answerTag", "boxed", "gsm8k", "answerIs", "bareAnswer", "lastNumber"];

/** Fill every option with its default. */
export function resolveOptions(opts: MathVerifyOptions = {}): ResolvedMathOptions {
  return {
    extraction: opts.extraction ?? [...DEFAULT_EXTRACTION],
    lastNumberFallback: opts.lastNumberFallback ?? true,
    ignoreThink: opts.ignoreThink ?? true,
    extractReference: opts.extractReference ?? true,
    stripUnits: opts.stripUnits ?? true,
    percent: opts.percent ?? "flexible",
    relTol: opts.relTol ?? 1e-9,
    absTol: opts.absTol ?? 1e-12,
    roundedDecimalDigits: opts.roundedDecimalDigits ?? 3,
    unorderedLists: opts.unorderedLists ?? true,
    maxAnswerLength: opts.maxAnswerLength ?? 400,
    probePoints: opts.probePoints ?? 6,
    cas: opts.cas ?? mathjsBackend,
  };
}
