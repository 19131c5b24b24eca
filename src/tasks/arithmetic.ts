/**
 * Integer arithmetic tasks with short, regular prompts (small character-level models train on
 * them on CPU).
 *
 * - `addition`: prompt `"123+45="`, answer `"168"`. Difficulty d = the maximum number of digits
 *   per operand: each operand is uniform in [0, 10^d − 1] (so ~90% of operands have exactly d
 *   digits). Range 1..18. The term count (default 2) is an option.
 * - `arithmetic`: the same with operators drawn from + − × (default 3 terms), evaluated with the
 *   usual precedence; prompt `"12*7-30="`, answer `"54"` (may be negative).
 *
 * Verifier: the response must start (after optional whitespace) with the integer, followed by the
 * end of the text, whitespace, or a special-token marker `<`; exact integer match. `solution` is
 * the answer itself, so `verify(example.solution, example)` is correct.
 */
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";
import type { Rng } from "./rng.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";

/** Options for an arithmetic task. */
export interface ArithmeticOptions {
  /** Task name (default "addition" when ops is ["+"], else "arithmetic"). */
  name?: string;
  /** Number of operands, >= 2 (default 2 for addition, 3 otherwise). */
  terms?: number;
  /** Operators to draw from (default ["+"] for addition; ["+", "-", "*"] for arithmetic). */
  ops?: ("+" | "-" | "*")[];
  /**
   * Partial credit for a wrong integer answer: reward = partialCredit × (fraction of digit
   * positions, aligned from the right over the longer of the two numbers, that match). 0 = off
   * (exact match only, the default). `correct` stays exact match either way.
   */
  partialCredit?: number;
  /**
   * Fixed-width layout (addition only): every operand is zero-padded to d digits and the answer
   * to the width of the largest possible sum, e.g. d = 2: `"07+45="` → `"052"`. Each digit then
   * sits at the same position in every prompt, which small models learn far faster than the
   * variable-width layout. The verifier still compares integers, so `"52"` is also correct.
   */
  pad?: boolean;
}

/** Fraction of digit positions (right-aligned over the longer number) where two integers agree. */
export function digitAgreement(a: string, b: string): number {
  const x = a.replace(/^[-\u2212]/, "");
  const y = b.replace(/^[-\u2212]/, "");
  const n = Math.max(x.length, y.length);
  if (n === 0) return 0;
  let same = 0;
  for (let i = 1; i <= n; i++) if (x[x.length - i] !== undefined && x[x.length - i] === y[y.length - i]) same++;
  return same / n;
}

const MAX_DIGITS = 18;
const RESPONSE_INT = /^\s*([-\u2212]?\d+)(?=$|\s|<)/;

/** Evaluate operands joined by + − × with the usual precedence, exactly (BigInt). */
export function evaluateTerms(operands: bigint[], ops: string[]): bigint {
  // Fold multiplications first, then add/subtract left to right.
  const sums: bigint[] = [operands[0]!];
  const signs: number[] = [1];
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    const v = operands[i + 1]!;
    if (op === "*") sums[sums.length - 1] = sums[sums.length - 1]! * v;
    else {
      sums.push(v);
      signs.push(op === "-" ? -1 : 1);
    }
  }
  let total = 0n;
  for (let i = 0; i < sums.length; i++) total += signs[i]! < 0 ? -sums[i]! : sums[i]!;
  return total;
}

/**
 * Check a response against an integer answer: the integer at the start of the response (after
 * whitespace), followed by the end, whitespace or `<`. Never throws.
 */
export function verifyLeadingInteger(response: string, answer: string): Verdict {
  const m = RESPONSE_INT.exec(typeof response === "string" ? response : "");
  if (!m) return { correct: false, reward: 0, extracted: null, reason: "no answer found" };
  const extracted = m[1]!.replace("\u2212", "-");
  let ok = false;
  try {
    ok = BigInt(extracted) === BigInt(answer.trim());
  } catch {
    ok = false;
  }
  return ok
    ? { correct: true, reward: 1, extracted, reason: "ok" }
    : { correct: false, reward: 0, extracted, reason: `wrong answer (expected ${answer})` };
}

/** Build an arithmetic task (addition by default). */
export function createArithmeticTask(opts: ArithmeticOptions = {}): Task {
  const ops = opts.ops ?? ["+"];
  if (ops.length === 0) throw new RangeError("arithmetic task: ops must not be empty");
  const isAddition = ops.length === 1 && ops[0] === "+";
  const name = opts.name ?? (isAddition ? "addition" : "arithmetic");
  const terms = opts.terms ?? (isAddition ? 2 : 3);
  if (!Number.isInteger(terms) || terms < 2) throw new RangeError(`${name} task: terms must be an integer >= 2, got ${terms}`);
  if (opts.pad && !isAddition) throw new RangeError(`${name} task: pad (fixed-width layout) is only defined for addition (ops ["+"])`);
  // Width of the largest possible sum of `terms` d-digit operands: digits of terms · (10^d − 1).
  const sumWidth = (d: number) => String(BigInt(terms) * (10n ** BigInt(d) - 1n)).length;

  const make = (rng: Rng, d: number) => {
    const operands: bigint[] = [];
    const chosen: string[] = [];
    for (let i = 0; i < terms; i++) {
      // Uniform in [0, 10^d - 1]: a d-digit string with leading zeros stripped.
      let s = "";
      for (let k = 0; k < d; k++) s += String(rng.int(0, 9));
      operands.push(BigInt(s));
      if (i > 0) chosen.push(rng.pick(ops));
    }
    const show = (x: bigint) => (opts.pad ? String(x).padStart(d, "0") : String(x));
    let prompt = show(operands[0]!);
    for (let i = 0; i < chosen.length; i++) prompt += chosen[i]! + show(operands[i + 1]!);
    prompt += "=";
    const value = String(evaluateTerms(operands, chosen));
    const answer = opts.pad ? value.padStart(sumWidth(d), "0") : value;
    return { prompt, answer, solution: answer, meta: { operands: operands.map(String), ops: chosen } };
  };

  return {
    name,
    difficulties: {
      min: 1,
      max: MAX_DIGITS,
      default: 3,
      description:
        `maximum digits per operand (each of the ${terms} operands is uniform in [0, 10^d - 1]); ` +
        (opts.pad
          ? `operands zero-padded to d digits and the answer to the widest sum; prompt like "045+007=" and the answer "052"`
          : `operators ${ops.join(" ")}; prompt like "123+45=" and the answer is the integer`),
    },
    generate(g: GenerateOptions): Example {
      checkDifficulty(name, g.difficulty, 1, MAX_DIGITS);
      return generateInSplit(name, g, (rng) => make(rng, g.difficulty));
    },
    verify(response: string, example: Example): Verdict {
      const v = verifyLeadingInteger(response, example.answer);
      if (!v.correct && v.extracted !== null && opts.partialCredit) {
        return { ...v, reward: opts.partialCredit * digitAgreement(v.extracted, example.answer.trim()) };
      }
      return v;
    },
  };
}

/** Multi-digit addition: `"123+45="` → `"168"`; difficulty = max digits per operand. */
export const additionTask: Task = createArithmeticTask();

/** Fixed-width addition: `"123+045="` → `"0168"` (operands padded to d digits, the answer to d + 1). */
export const paddedAdditionTask: Task = createArithmeticTask({ name: "addition-padded", pad: true });

/** Mixed + − × arithmetic with 3 terms: `"12*7-30="` → `"54"`; difficulty = max digits per operand. */
export const arithmeticTask: Task = createArithmeticTask({ ops: ["+", "-", "*"] });
