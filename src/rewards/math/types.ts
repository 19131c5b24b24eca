import type { CasBackend } from "./cas.ts";

/** The default CAS, set by ./index.ts when the verifier loads (so extraction alone does not load mathjs). */
let defaultCas: CasBackend | undefined;

/** Set the CAS backend that options without `cas` use (./index.ts sets mathjs). */
export function setDefaultCas(b: CasBackend): void {
  defaultCas = b;
}

/** Stands in until ./index.ts has loaded: extraction never compiles, so reaching it is a bug. */
const NO_CAS = new Proxy({}, { get: () => { throw new Error("the math CAS is not loaded: import src/rewards/math/index.ts (rlvr/math)"); } }) as CasBackend;

/**
 * Public types and defaults of the math answer verifier (src/rewards/math).
 * See docs/rewards-math.md for how extraction and equivalence work.
 */

/** Where an answer can be found in a model response, tried in the order given. */
export type ExtractionMode =
  | "answerTag" // last <answer>...</answer> block (a \boxed{} inside it wins)
  | "finalAnswer" // the statement after the last "final answer" when no \boxed{} comes after it
  | "boxed" // the last group of \boxed{...} / \fbox{...} (boxes joined only by "and", commas, spaces form one list)
  | "gsm8k" // last "#### n" line (GSM8K)
  | "answerIs" // last "the (final) answer is ..." / "Answer: ..."
  | "bareAnswer" // the whole response when it is short and has no prose (e.g. "x = 3", "\\frac{1}{2}")
  | "lastMath" // the last math span ($…$, \(…\), \[…\]) unless a plain number follows it
  | "lastNumber"; // last number outside math spans and words (fallback, see `lastNumberFallback`)

/**
 * How a comma between digits is read. "never": a list separator or a thousands separator (`1,000`), never a
 * decimal point. "auto" (default): as "never", except that an answer that is one number whose comma cannot be a
 * thousands separator (`1,22`, `2,74`, `1000,99`, `0,111`) is read as a decimal when the other answer is a
 * single number; `1,222` stays one thousand two hundred and twenty-two; `1,5` (one digit after the comma, a
 * short integer before it) is 1.5 in plain text but the two answers 1 and 5 inside `$…$` or `\boxed{}`; and
 * against a list, `1,22` stays a list.
 * "always": every comma written between two digits (no space) is a decimal point (`1,5` is 1.5, `1,000` is 1).
 */
export type DecimalCommaMode = "never" | "auto" | "always";

/** How `%` is treated. "flexible": `50\%` equals both `50` and `0.5`; "strict": `50\%` is 0.5 only; "ignore": `%` is dropped (50). */
export type PercentMode = "flexible" | "strict" | "ignore";

/** Options of {@link verifyMath}, {@link extractAnswer} and {@link mathEquivalent}. Every field is optional. */
export interface MathVerifyOptions {
  /** Extraction modes, tried in order; the first that finds something wins. Default: answerTag, finalAnswer, boxed, gsm8k, answerIs, bareAnswer, lastMath, lastNumber. */
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
  /**
   * Relative tolerance for values that are not exact rationals (irrationals, floats): |a − b| ≤ relTol·max(|a|, |b|).
   * Default 1e-14 (about 45 ulps: `10^{12}\pi + 1` is not `10^{12}\pi`). CAS probes of expressions with variables
   * use at least 1e-9.
   */
  relTol?: number;
  /** Absolute tolerance, used only near zero (`\sin\pi` is 1.2e-16). Default 1e-15. */
  absTol?: number;
  /**
   * A decimal response (e.g. `0.333333`, `3.14159`) matches a reference that has no finite decimal expansion (`1/3`, `\pi`)
   * when it equals the reference rounded to the same number of decimals and has at least this many significant digits.
   * 0 turns it off. Default 6 (Math-Verify's precision: `0.333333` is 1/3, `0.333` is not).
   */
  roundedDecimalDigits?: number;
  /** Bare comma lists (`1, 2`) compare order-insensitively (they are "multiple answers"). Default true. */
  unorderedLists?: boolean;
  /** Answers longer than this (characters, after extraction) are compared as text only; bounds parsing time. Default 400. */
  maxAnswerLength?: number;
  /** Number of random points at which expressions with free variables are probed through the CAS. Default 6. */
  probePoints?: number;
  /** Decimal commas (`1,22`): see {@link DecimalCommaMode}. Default "auto". */
  decimalComma?: DecimalCommaMode;
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

export const DEFAULT_EXTRACTION: readonly ExtractionMode[] = [
  "answerTag", "finalAnswer", "boxed", "gsm8k", "answerIs", "bareAnswer", "lastMath", "lastNumber",
];

/** Fill every option with its default. */
export function resolveOptions(opts: MathVerifyOptions = {}): ResolvedMathOptions {
  return {
    extraction: opts.extraction ?? [...DEFAULT_EXTRACTION],
    lastNumberFallback: opts.lastNumberFallback ?? true,
    ignoreThink: opts.ignoreThink ?? true,
    extractReference: opts.extractReference ?? true,
    stripUnits: opts.stripUnits ?? true,
    percent: opts.percent ?? "flexible",
    relTol: opts.relTol ?? 1e-14,
    absTol: opts.absTol ?? 1e-15,
    roundedDecimalDigits: opts.roundedDecimalDigits ?? 6,
    unorderedLists: opts.unorderedLists ?? true,
    maxAnswerLength: opts.maxAnswerLength ?? 400,
    probePoints: opts.probePoints ?? 6,
    decimalComma: opts.decimalComma ?? "auto",
    cas: opts.cas ?? defaultCas ?? NO_CAS,
  };
}
