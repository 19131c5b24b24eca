/**
 * The RL reward's gate: what a response must carry before any instruction-following constraint
 * can reward it. The reference IFEval implementation scores a response against each constraint
 * alone, so a response that says nothing satisfies every constraint nothing can violate — `1`
 * has no commas, fewer than 50 words, and (langdetect failing on it, which the reference counts
 * as followed) is "in" any language. That is right for reproducing published scores and wrong
 * for a reward a policy optimises. The gate (on by default in the `ifeval` verifier, off in
 * `ifeval-reference` and in `verifyConstraints`) rejects, before any constraint is checked:
 * - a response with fewer than `minWords` words once markup is removed — HTML comments and tags,
 *   code-fence markers and markdown markers are not words; a word is two or more letters, or one
 *   letter of a script written without spaces (Han, kana, Thai, …); digits (`1`, `¹`, `٣`) and
 *   symbols are not words;
 * - a response whose text (markup removed) is not identified as the language a
 *   `language:response_language` constraint asks for (the reference passes text it cannot
 *   identify, and identifies a response by what its markup hides too).
 */
import { detectLanguage, sameLanguage } from "./reference/language.ts";
import { getConstraint } from "./registry.ts";

/** Options of the gate. */
export interface GateOptions {
  /** Fewest words the response must hold, markup removed (default 1). */
  minWords?: number;
}

const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
const TAG = /<\/?[A-Za-z][^<>]*>/g;
const FENCE = /```[^\n`]*/g;
/** Two or more letters (marks allowed inside), or one letter of a script written without spaces. */
const WORD = /\p{L}[\p{L}\p{M}]*\p{L}|[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/gu;

/** The response without HTML comments, tags and code-fence markers. */
export function withoutMarkup(response: string): string {
  return response.replace(COMMENT, " ").replace(TAG, " ").replace(FENCE, " ");
}

/** Words of the response once markup is removed (see the module's definition of a word). */
export function gateWords(response: string): string[] {
  return withoutMarkup(response).match(WORD) ?? [];
}

/**
 * Why the gate rejects `response` for `constraints`, or null when it passes.
 * @param constraints the row's constraints (read for `language` parameters)
 */
export function gateReason(response: string, constraints: readonly { type: string; [k: string]: unknown }[], opts: GateOptions = {}): string | null {
  const min = opts.minWords ?? 1;
  if (typeof response !== "string") return "the response is not text";
  const n = gateWords(response).length;
  if (n < min) return n === 0 ? "no words (only digits, symbols or markup)" : `${n} words, fewer than the gate's minWords ${min}`;
  for (const c of constraints) {
    if (getConstraint(String(c?.type))?.name !== "language_script" || typeof c.language !== "string" || c.script !== undefined) continue;
    const got = detectLanguage(withoutMarkup(response));
    if (got === null || !sameLanguage(c.language, got)) return `language: the text reads as ${got ?? "no identifiable language"}, not ${c.language}`;
  }
  return null;
}
