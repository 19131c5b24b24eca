/**
 * Small text helpers shared by the short-answer verifiers.
 */

/**
 * Find the content of the last `\boxed{…}` (or `\fbox{…}`) with balanced braces.
 * @returns the content, or null when there is none / it is unbalanced.
 */
export function lastBoxed(s: string): string | null {
  const re = /\\(?:boxed|fbox)\s*\{/g;
  let start = -1;
  for (let m = re.exec(s); m; m = re.exec(s)) start = m.index + m[0].length;
  if (start < 0) return null;
  let depth = 1;
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return s.slice(start, i);
    }
  }
  return null;
}

/** Content of the last `<tag>…</tag>` (case-insensitive), or null. */
export function lastTag(s: string, tag: string): string | null {
  const re = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "gi");
  let last: string | null = null;
  for (const m of s.matchAll(re)) last = m[1]!;
  return last;
}

/**
 * The text after the last "answer:" / "the answer is" / "final answer:" phrase, up to the end of
 * that line (trailing full stop removed), or null.
 */
export function lastAnswerPhrase(s: string): string | null {
  const re = /(?:final answer|correct answer|the answer|answer)\s*(?:is|:|=)\s*:?\s*([^\n]*)/gi;
  let last: string | null = null;
  for (const m of s.matchAll(re)) last = m[1]!;
  if (last === null) return null;
  const t = last.trim().replace(/[.。]\s*$/, "").trim();
  return t.length ? t : null;
}

/**
 * The answer part of a response: last `<answer>` tag, else last `\boxed{}`, else the last
 * "answer is / answer:" phrase, else null.
 */
export function answerSpan(s: string): string | null {
  return lastTag(s, "answer") ?? lastBoxed(s) ?? lastAnswerPhrase(s);
}

/**
 * SQuAD-style normalisation: lower case, remove punctuation, drop the articles a/an/the, collapse
 * whitespace. (Rajpurkar et al. 2016, the SQuAD v1.1 evaluation convention.) Unicode-aware:
 * punctuation is every \p{P} and \p{S} character.
 */
export function normalizeAnswer(s: string): string {
  return s
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, " ")
    .replace(/\b(a|an|the)\b/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** Clip a string for messages. */
export function clip(s: string, n = 80): string {
  return s.length <= n ? s : s.slice(0, n - 1) + "…";
}
