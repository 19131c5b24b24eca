/**
 * `addition-scratchpad`: column addition whose demonstrations show their work — one note per
 * column, right to left, with the carry — before the answer. The first task in the registry whose
 * responses vary in length, so response length, truncation and length penalties mean something
 * for a character-level model.
 *
 * Prompt: the operands zero-padded to d digits, `"47+85="`. A demonstration (`solution`):
 * ```
 * 7+5=12;4+8+1=13#132
 * ```
 * - one note per column from the right: `x+y=s`, with `+1` when a carry comes in (`4+8+1=13`);
 *   `s` is the column's full sum, so its tens digit is the carry out (one or two digits);
 * - `#` is the answer marker; the answer (the sum, unpadded) follows it and ends the response.
 *
 * Length varies for two reasons. Naturally: a carried column adds two characters (`+1`) and a
 * two-digit sum one. By padding, at documented rates, so that some demonstrations are long for no
 * gain (what length shaping should learn to drop):
 * - with probability {@link SCRATCHPAD_RATES}.restate (0.25) the response first restates the
 *   problem, `47+85;`;
 * - each column note is, independently with probability {@link SCRATCHPAD_RATES}.repeat (0.2),
 *   written twice (`7+5=12;7+5=12;`).
 * So at d digits a demonstration is between `6d + 1 + |answer|` characters (no carries, no padding)
 * and `(2d + 2) + 2·9d + 1 + |answer|` (every column carried, two-digit and repeated), see
 * {@link scratchpadLengthBounds}.
 *
 * Verifier: the answer is the integer right after the first `#` (after optional whitespace),
 * followed by the end of the text, whitespace or `<`; exact integer match (leading zeros allowed).
 * Any scratchpad before the marker is accepted — the reward is the outcome only, so the policy may
 * shorten, lengthen or drop its notes; a response without a marker (e.g. truncated) scores 0.
 * {@link parseScratchpad} tells whether a scratchpad is well formed and its notes are right.
 *
 * Alphabet: `0123456789+=;#` ({@link SCRATCHPAD_ALPHABET}), enough for a char tokenizer.
 */
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";
import type { Rng } from "./rng.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";

/** Every character a prompt or a demonstration of the task uses (for `tokenizer: { type: char }`). */
export const SCRATCHPAD_ALPHABET = "0123456789+=;#";

/** The answer marker: the answer is the integer right after its first occurrence. */
export const SCRATCHPAD_MARKER = "#";

/** Padding rates of the demonstrations (probabilities, independent draws). */
export const SCRATCHPAD_RATES = {
  /** Probability that a demonstration starts by restating the problem (`47+85;`). */
  restate: 0.25,
  /** Probability that each column note is written twice. */
  repeat: 0.2,
} as const;

const MAX_DIGITS = 12;
const ANSWER_AFTER_MARKER = /^\s*(\d+)(?=$|\s|<)/;
const NOTE = /^(\d)\+(\d)(\+1)?=(\d{1,2})$/;

/** One column's work: the digits, the carry in, and the column sum (digit + 10 × carry out). */
export interface ColumnNote {
  x: number;
  y: number;
  carryIn: 0 | 1;
  sum: number;
}

/** The column notes of `a + b` (right to left) and the sum, for zero-padded operands of equal width. */
export function columnNotes(a: string, b: string): { notes: ColumnNote[]; sum: string } {
  const notes: ColumnNote[] = [];
  let carry: 0 | 1 = 0;
  let digits = "";
  for (let i = a.length - 1; i >= 0; i--) {
    const x = a.charCodeAt(i) - 48;
    const y = b.charCodeAt(i) - 48;
    const s: number = x + y + carry;
    notes.push({ x, y, carryIn: carry, sum: s });
    digits = String(s % 10) + digits;
    carry = s >= 10 ? 1 : 0;
  }
  if (carry) digits = "1" + digits;
  return { notes, sum: String(BigInt(digits)) };
}

/** A note's text: `x+y=s`, or `x+y+1=s` with a carry in. */
export function formatNote(n: ColumnNote): string {
  return `${n.x}+${n.y}${n.carryIn ? "+1" : ""}=${n.sum}`;
}

/**
 * The shortest and longest demonstration at `digits` digits, in characters, for an answer of
 * `answerLength` characters: see the module comment.
 */
export function scratchpadLengthBounds(digits: number, answerLength: number): { min: number; max: number } {
  // shortest: d notes "x+y=s" (5 chars) joined by d − 1 ";", then "#" and the answer
  const min = 5 * digits + (digits - 1) + 1 + answerLength;
  // longest: restatement (2d + 2 with its ";"), 2d notes "x+y+1=ss" (8 chars) joined by 2d − 1 ";"
  const max = 2 * digits + 2 + 8 * 2 * digits + (2 * digits - 1) + 1 + answerLength;
  return { min, max };
}

/** What {@link parseScratchpad} finds in a response. */
export interface ScratchpadParse {
  /** The text before the marker, or the whole response when there is no marker. */
  scratchpad: string;
  /** The answer text after the marker (trimmed up to the first whitespace or `<`), or null. */
  answer: string | null;
  /** Notes parsed from the scratchpad (restatements and unparsable pieces are skipped). */
  notes: ColumnNote[];
  /** Marker present, and every `;`-piece is either a restatement of the prompt or a note. */
  wellFormed: boolean;
  /** Well formed, and the distinct notes in order are exactly the example's column notes. */
  consistent: boolean;
}

/**
 * Parse a response into scratchpad and answer and check the notes against the example's operands
 * (`meta.operands`, zero-padded strings). Never throws.
 */
export function parseScratchpad(response: string, example: Example): ScratchpadParse {
  const text = typeof response === "string" ? response : "";
  const at = text.indexOf(SCRATCHPAD_MARKER);
  const scratchpad = at < 0 ? text : text.slice(0, at);
  const m = at < 0 ? null : ANSWER_AFTER_MARKER.exec(text.slice(at + 1));
  const answer = m ? m[1]! : null;
  const restatement = example.prompt.endsWith("=") ? example.prompt.slice(0, -1) : example.prompt;
  const notes: ColumnNote[] = [];
  let wellFormed = at >= 0 && answer !== null && scratchpad.length > 0;
  const pieces = scratchpad.length > 0 ? scratchpad.split(";") : [];
  pieces.forEach((p, i) => {
    if (i === 0 && p === restatement) return;
    const n = NOTE.exec(p);
    if (!n) {
      wellFormed = false;
      return;
    }
    notes.push({ x: Number(n[1]), y: Number(n[2]), carryIn: n[3] ? 1 : 0, sum: Number(n[4]) });
  });
  let consistent = false;
  const ops = (example.meta as { operands?: unknown } | undefined)?.operands;
  if (wellFormed && Array.isArray(ops) && ops.length === 2) {
    const want = columnNotes(String(ops[0]), String(ops[1])).notes.map(formatNote);
    consistent = matchesWithRepeats(notes.map(formatNote), want);
  }
  return { scratchpad, answer, notes, wellFormed, consistent };
}

/**
 * Whether `got` is `want` with each element written one or more times in a row (a repeated note
 * is a restatement). Two equal columns in a row (`11+22`) make the split ambiguous, hence the search.
 */
function matchesWithRepeats(got: string[], want: string[]): boolean {
  const memo = new Map<number, boolean>();
  const can = (i: number, j: number): boolean => {
    if (j === want.length) return i === got.length;
    const key = i * (want.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let ok = false;
    for (let k = i; k < got.length && got[k] === want[j] && !ok; k++) ok = can(k + 1, j + 1);
    memo.set(key, ok);
    return ok;
  };
  return can(0, 0);
}

/** Check a response: the integer right after the first marker equals the sum. Never throws. */
export function verifyScratchpad(response: string, example: Example): Verdict {
  const text = typeof response === "string" ? response : "";
  const at = text.indexOf(SCRATCHPAD_MARKER);
  if (at < 0) return { correct: false, reward: 0, extracted: null, reason: `no answer marker "${SCRATCHPAD_MARKER}"` };
  const m = ANSWER_AFTER_MARKER.exec(text.slice(at + 1));
  if (!m) return { correct: false, reward: 0, extracted: null, reason: `no integer after the marker "${SCRATCHPAD_MARKER}"` };
  const extracted = m[1]!;
  let ok = false;
  try {
    ok = BigInt(extracted) === BigInt(String(example.answer).trim());
  } catch {
    ok = false;
  }
  return ok
    ? { correct: true, reward: 1, extracted, reason: "ok" }
    : { correct: false, reward: 0, extracted, reason: `wrong answer (expected ${example.answer})` };
}

function make(rng: Rng, d: number) {
  let a = "";
  let b = "";
  for (let k = 0; k < d; k++) a += String(rng.int(0, 9));
  for (let k = 0; k < d; k++) b += String(rng.int(0, 9));
  const { notes, sum } = columnNotes(a, b);
  const parts: string[] = [];
  if (rng.next() < SCRATCHPAD_RATES.restate) parts.push(`${a}+${b}`);
  for (const n of notes) {
    parts.push(formatNote(n));
    if (rng.next() < SCRATCHPAD_RATES.repeat) parts.push(formatNote(n));
  }
  const solution = `${parts.join(";")}${SCRATCHPAD_MARKER}${sum}`;
  return { prompt: `${a}+${b}=`, answer: sum, solution, meta: { operands: [a, b] } };
}

/** Column addition with a per-column scratchpad before `#` and the answer; difficulty = digits per operand. */
export const scratchpadAdditionTask: Task = {
  name: "addition-scratchpad",
  difficulties: {
    min: 1,
    max: MAX_DIGITS,
    default: 2,
    description:
      'digits per operand (zero-padded); prompt like "47+85=", a demonstration like "7+5=12;4+8+1=13#132" ' +
      `(some restate the problem or repeat notes); the answer is the integer after "${SCRATCHPAD_MARKER}"`,
  },
  generate(g: GenerateOptions): Example {
    checkDifficulty("addition-scratchpad", g.difficulty, 1, MAX_DIGITS);
    return generateInSplit("addition-scratchpad", g, (rng) => make(rng, g.difficulty));
  },
  verify: verifyScratchpad,
};
