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
 *   identify, and identifies a response by what its markup hides too);
 * - a repetitive response: from `REPEAT_MIN_WORDS` words on, fewer than `minDistinct` (default
 *   0.5) of its word trigrams distinct — the prompt or its keywords pasted line after line
 *   satisfies "at least 40 words" and "mention whiskers" without writing anything. Varied prose
 *   keeps above 0.9 (English, French, and Japanese, where each Han/kana character is a word).
 */
import { detectLanguage, sameLanguage } from "./reference/language.ts";
import { getConstraint } from "./registry.ts";

/** Options of the gate. */
export interface GateOptions {
  /** Fewest words the response must hold, markup removed (default 1). */
  minWords?: number;
  /** Lowest share of distinct word trigrams a response of REPEAT_MIN_WORDS words or more must
   *  keep (default 0.5; 0 turns the repetition check off). */
  minDistinct?: number;
}

/** Fewest words before the repetition check applies (a short refrain is not degenerate). */
export const REPEAT_MIN_WORDS = 20;

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

/** Share of the word trigrams of `words` that are distinct (case-folded); 1 for fewer than 3 words. */
export function distinctTrigramShare(words: readonly string[]): number {
  if (words.length < 3) return 1;
  const seen = new Set<string>();
  for (let i = 0; i + 3 <= words.length; i++) seen.add(`${words[i]} ${words[i + 1]} ${words[i + 2]}`.toLowerCase());
  return seen.size / (words.length - 2);
}

/**
 * Why the gate rejects `response` for `constraints`, or null when it passes.
 * @param constraints the row's constraints (read for `language` parameters)
 */
export function gateReason(response: string, constraints: readonly { type: string; [k: string]: unknown }[], opts: GateOptions = {}): string | null {
  const min = opts.minWords ?? 1;
  if (typeof response !== "string") return "the response is not text";
  const words = gateWords(response);
  const n = words.length;
  if (n < min) return n === 0 ? "no words (only digits, symbols or markup)" : `${n} words, fewer than the gate's minWords ${min}`;
  const share = n >= REPEAT_MIN_WORDS ? distinctTrigramShare(words) : 1;
  if (share < (opts.minDistinct ?? 0.5)) return `repetitive: ${Math.round(share * 100)}% of its word trigrams distinct, under the gate's minDistinct ${opts.minDistinct ?? 0.5}`;
  for (const c of constraints) {
    if (getConstraint(String(c?.type))?.name !== "language_script" || typeof c.language !== "string" || c.script !== undefined) continue;
    const got = detectLanguage(withoutMarkup(response));
    if (got === null || !sameLanguage(c.language, got)) return `language: the text reads as ${got ?? "no identifiable language"}, not ${c.language}`;
  }
  return null;
}
