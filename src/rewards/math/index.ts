/**
 * Math answer verifier: extract the final answer from a response and decide whether it is equivalent
 * to a reference answer. Public API: {@link verifyMath}, {@link extractAnswer}, {@link mathEquivalent}.
 * Documentation: docs/rewards-math.md.
 */
import { compareAnswers } from "./equivalence.ts";
import { extractAnswer, extractReference } from "./extract.ts";
import { normalizeAnswer } from "./normalize.ts";
import { normalizeText, parseAnswer } from "./parse.ts";
import { mathjsBackend } from "./cas.ts";
import { resolveOptions, setDefaultCas, type Equivalence, type ExtractedAnswer, type MathVerdict, type MathVerifyOptions } from "./types.ts";

export type { DecimalCommaMode, Equivalence, ExtractedAnswer, ExtractionMode, MathVerdict, MathVerifyOptions, PercentMode } from "./types.ts";
export type { CasBackend, CompiledExpr, Complex } from "./cas.ts";
export type { Node } from "./tree.ts";
export { extractAnswer, extractReference, isNegated, removeThink } from "./extract.ts";
export { mathjsBackend } from "./cas.ts";
export { foldUnicode, normalizeAnswer, numberWithWords } from "./normalize.ts";

setDefaultCas(mathjsBackend);

/** Most CAS compilations one comparison may spend (lists and matrices of many items). */
const COMPILE_BUDGET = 400;

/**
 * Multiple-choice fallback: when the reference is one option letter (`B`, `(B)`, `\text{(B)}`) and no mode found
 * an answer, the last option letter in parentheses in the response (`The correct choice is (B).`).
 */
function choiceLetter(response: string, reference: string): ExtractedAnswer | null {
  if (!/^\s*(?:\\text(?:bf)?\{)?\s*\(?[A-E]\)?\s*\}?\s*$/.test(reference) || typeof response !== "string") return null;
  const all = [...response.matchAll(/\(([A-E])\)/g)];
  const last = all[all.length - 1];
  return last ? { answer: last[1]!, mode: "answerIs" } : null;
}

/** Math delimiters or a box: an answer written inside them is math, not plain text. */
const MATH_MARKUP = /[$]|\\[([]|\\boxed|\\fbox/;

const LONE_COMMA_NUMBER = /^(-?\d+),(\d+)(%?)$/;

/**
 * The decimal-comma reading of `s` under `decimalComma: "auto"`: `s` is one number `a,b` (a comma that
 * normalisation did not take as a thousands separator) and `other` is a single number, not a list. Inside math
 * delimiters or a box (`plain` false), `d,d` with a short integer before a single digit stays a list.
 * @returns `a.b`, or null when the rule does not apply.
 */
function decimalCommaReading(s: string, other: string, plain: boolean): string | null {
  const m = LONE_COMMA_NUMBER.exec(s);
  if (!m || LONE_COMMA_NUMBER.test(other)) return null;
  const int = m[1]!.replace("-", "");
  // inside math ($1,5$, \boxed{1,5}) a single digit after a short integer reads as the two answers 1 and 5;
  // in plain text ("Total: 3,5 €", a bare 1,5) it is a decimal comma
  if (!plain && m[2]!.length === 1 && int !== "0" && int.length < 4) return null;
  const po = parseAnswer(other);
  if (po.k !== "expr") return null;
  return `${m[1]}.${m[2]}${m[3]}`;
}

/**
 * Decide whether two answers (already extracted) are mathematically equivalent.
 * @param a the response answer, e.g. `\frac{1}{2}`, `x = 3`, `(1, 2]`, `\{1, 2\}`.
 * @param b the reference answer.
 * @param opts tolerance, percent, units and list options (extraction options are ignored).
 * @returns `{equivalent, reason, normalizedA, normalizedB}`. Never throws: internal failures give
 *   `equivalent: false` with the failure in `reason`.
 * Source: rules follow the grading conventions of MATH (Hendrycks et al. 2021) and math_verify (Hugging Face),
 *   reimplemented here; see docs/rewards-math.md.
 */
export function mathEquivalent(a: string, b: string, opts: MathVerifyOptions = {}): Equivalence {
  return equivalent(a, b, opts, false, false);
}

/** {@link mathEquivalent}, told which answers were written as plain text (outside math delimiters and boxes). */
function equivalent(a: string, b: string, opts: MathVerifyOptions, plainA: boolean, plainB: boolean): Equivalence {
  let normalizedA = "";
  let normalizedB = "";
  try {
    const o = resolveOptions(opts);
    if (typeof a !== "string" || typeof b !== "string") return { equivalent: false, reason: "answer is not a string", normalizedA, normalizedB };
    normalizedA = normalizeAnswer(a.slice(0, o.maxAnswerLength * 4), o.stripUnits, o.decimalComma);
    normalizedB = normalizeAnswer(b.slice(0, o.maxAnswerLength * 4), o.stripUnits, o.decimalComma);
    let note = "";
    if (o.decimalComma === "auto") {
      // one lone number with a comma that cannot be a thousands separator (normalisation already removed
      // those), against a single number: the comma is a decimal comma
      const da = decimalCommaReading(normalizedA, normalizedB, plainA);
      const db = decimalCommaReading(normalizedB, normalizedA, plainB);
      if (da !== null || db !== null) note = " (decimal comma)";
      normalizedA = da ?? normalizedA;
      normalizedB = db ?? normalizedB;
    }
    if (normalizedA.length === 0 || normalizedB.length === 0) return { equivalent: false, reason: "empty answer after normalisation", normalizedA, normalizedB };
    if (normalizedA.replace(/\s+/g, "") === normalizedB.replace(/\s+/g, "")) return { equivalent: true, reason: "identical after normalisation" + note, normalizedA, normalizedB };
    if (normalizedA.length > o.maxAnswerLength || normalizedB.length > o.maxAnswerLength) {
      const same = normalizeText(normalizedA) === normalizeText(normalizedB);
      return { equivalent: same, reason: `answer longer than maxAnswerLength (${o.maxAnswerLength}): text comparison`, normalizedA, normalizedB };
    }
    const pa = parseAnswer(normalizedA);
    const pb = parseAnswer(normalizedB);
    const d = compareAnswers(pa, pb, { o, cas: o.cas, budget: { compiles: COMPILE_BUDGET } });
    return { equivalent: d.equal, reason: d.rule + note, normalizedA, normalizedB };
  } catch (e) {
    return { equivalent: false, reason: `internal error: ${(e as Error)?.message ?? String(e)}`, normalizedA, normalizedB };
  }
}

/**
 * Verify a model response against a reference answer (RLVR outcome reward for math).
 * @param response the full model response (reasoning, `<think>`, `\boxed{}`, `#### n`, `<answer>` tags...).
 * @param reference the reference answer, or a full reference solution (MATH `solution` with `\boxed{}`,
 *   GSM8K answer with `#### n`); a plain reference is used whole.
 * @param opts see {@link MathVerifyOptions} (extraction order, last-number fallback, units, percent, tolerance...).
 * @returns {@link MathVerdict}: `correct`, the raw `extracted` answer, both normalised answers and a `reason`
 *   naming the extraction mode and the rule that decided. Never throws; bounded time (answers are length-capped,
 *   exact powers are size-capped, CAS work is budgeted).
 * Source: extraction conventions of MATH, GSM8K and DeepSeek-R1; equivalence in ./equivalence.ts.
 */
export function verifyMath(response: string, reference: string, opts: MathVerifyOptions = {}): MathVerdict {
  try {
    const ref = extractReference(reference, opts);
    if (ref === null) return { correct: false, extracted: null, normalizedAnswer: null, normalizedReference: null, reason: "empty reference" };
    const got = extractAnswer(response, opts) ?? choiceLetter(response, ref.answer);
    if (got === null) {
      const o = resolveOptions(opts);
      return {
        correct: false,
        extracted: null,
        normalizedAnswer: null,
        normalizedReference: normalizeAnswer(ref.answer.slice(0, o.maxAnswerLength * 4), o.stripUnits, o.decimalComma),
        reason: "no answer extracted",
      };
    }
    const plainA = got.mode === "lastNumber" || (got.mode === "bareAnswer" && !MATH_MARKUP.test(response));
    const plainB = ref.mode === "whole" && !MATH_MARKUP.test(reference);
    const eq = equivalent(got.answer, ref.answer, opts, plainA, plainB);
    return {
      correct: eq.equivalent,
      extracted: got.answer,
      normalizedAnswer: eq.normalizedA,
      normalizedReference: eq.normalizedB,
      reason: `${got.mode}: ${eq.equivalent ? "equivalent" : "not equivalent"} (${eq.reason})`,
    };
  } catch (e) {
    return { correct: false, extracted: null, normalizedAnswer: null, normalizedReference: null, reason: `internal error: ${(e as Error)?.message ?? String(e)}` };
  }
}
