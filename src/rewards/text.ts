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

/** One stated answer: its text and where it starts and ends in the response. */
interface Stated {
  at: number;
  end: number;
  text: string;
}

/** Every `\boxed{…}` / `\fbox{…}` with balanced braces, in order; null when one never closes (its answer is unknown). */
function allBoxed(s: string): Stated[] | null {
  const out: Stated[] = [];
  const re = /\\(?:boxed|fbox)\s*\{/g;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const start = m.index + m[0].length;
    let depth = 1;
    let i = start;
    for (; i < s.length && depth > 0; i++) depth += s[i] === "{" ? 1 : s[i] === "}" ? -1 : 0;
    if (depth !== 0) return null;
    out.push({ at: m.index, end: i, text: s.slice(start, i - 1) });
    re.lastIndex = i;
  }
  return out;
}

/** Every `<tag>…</tag>` (case-insensitive), in order. */
function allTags(s: string, tag: string): Stated[] {
  return [...s.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "gi"))].map((m) => ({ at: m.index!, end: m.index! + m[0].length, text: m[1]! }));
}

const same = (a: string, b: string) => a.trim().replace(/\s+/g, " ") === b.trim().replace(/\s+/g, " ");

/** A final-answer statement ("the answer is 8", "Final answer: 8", a line "Answer: 8"): its text, or null. */
function lastFinalPhrase(s: string): string | null {
  const re = /(?:final answer|the (?:correct |final )?answer)\s*(?:is|:|=)\s*:?\s*([^\n]*)|^[\s*#]*answer[\s*]*:\s*([^\n]*)/gim;
  let last: string | null = null;
  for (const m of s.matchAll(re)) last = (m[1] ?? m[2])!;
  const t = last?.trim().replace(/[.。]\s*$/, "").trim();
  return t ? t : null;
}

/**
 * What a response states as its answer, failing closed on hedges:
 * - `<answer>` tags: their content when every tag says the same; a hedge when they differ;
 * - else `\boxed{}`es: a hedge when they differ (`\boxed{3} or \boxed{4}`, an empty last box) or
 *   one never closes;
 *   else the box — unless a final-answer statement after the last box says something else
 *   ("a common mistake is \boxed{3}; the answer is 4"): the last statement wins;
 * - else the last "answer is / answer:" phrase; else none.
 */
export function answerStatement(s: string): { text: string } | { hedge: true } | null {
  const tags = allTags(s, "answer");
  if (tags.length) return tags.every((t) => same(t.text, tags[0]!.text)) ? { text: tags[tags.length - 1]!.text } : { hedge: true };
  const boxes = allBoxed(s);
  if (boxes === null) return { hedge: true };
  if (boxes.length) {
    if (!boxes.every((b) => same(b.text, boxes[0]!.text))) return { hedge: true };
    const box = boxes[boxes.length - 1]!;
    const after = lastFinalPhrase(s.slice(box.end));
    // A restatement ("the answer is 7 because …") keeps the box; a different final answer wins.
    const nb = normalizeAnswer(box.text);
    const na = after === null ? "" : normalizeAnswer(after);
    if (after !== null && !(nb !== "" && (na === nb || na.startsWith(nb + " ")))) return { text: after };
    return { text: box.text };
  }
  const p = lastAnswerPhrase(s);
  return p === null ? null : { text: p };
}

/**
 * The answer part of a response (see answerStatement): the agreed `<answer>` tag, else the agreed
 * `\boxed{}` (or a different final-answer statement after it), else the last "answer is /
 * answer:" phrase; null when there is none or the response hedges between different answers.
 */
export function answerSpan(s: string): string | null {
  const a = answerStatement(s);
  return a && "text" in a ? a.text : null;
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
