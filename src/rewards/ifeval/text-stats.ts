/**
 * Counting words, sentences and paragraphs for the constraint checkers.
 * Conventions of mode "strict-words" (ours, documented in docs/rewards-ifeval.md): a word is a
 * run of letters/digits, with inner apostrophes or hyphens ("don't", "well-known" are one word);
 * sentences end at . ! ? … (or CJK 。！？) followed by whitespace or the end, except after common
 * abbreviations, initials (not "I") and numbered-list markers; paragraphs are separated by blank
 * lines, or by a markdown divider `***` (own line or inline) when `divider` is set.
 */

const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;

export function words(s: string): string[] {
  return s.match(WORD) ?? [];
}

const LIST_MARKER = /(?:^|\n)[ \t]*(?:\d{1,3}|[a-z]|[ivx]{1,4})[.)]$/iu;
const ABBREV = new Set(["mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "inc", "ltd", "no", "fig", "approx"]);

export function sentences(s: string): string[] {
  const out: string[] = [];
  let start = 0;
  const re = /([.!?…。！？]+)(["'”’)\]]*)(?=\s|$)/g;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const end = m.index + m[0].length;
    const before = s.slice(Math.max(start, m.index - 64), m.index); // the last word is all we look at (keeps this linear)
    const lastWord = (before.match(/([\p{L}.]+)$/u)?.[1] ?? "").toLowerCase();
    const initial = /^\p{L}$/u.test(lastWord) && lastWord !== "i";
    if (m[1] === "." && (ABBREV.has(lastWord) || initial || /^(?:\p{L}\.)+\p{L}$/u.test(lastWord))) continue;
    const text = s.slice(start, end).trim();
    // A numbered-list marker ("1.", "2)") is not a sentence: it joins the text it numbers.
    if (LIST_MARKER.test(text)) continue;
    if (words(text).length) out.push(text);
    start = end;
  }
  const tail = s.slice(start).trim();
  if (words(tail).length) out.push(tail);
  return out;
}

export function paragraphs(s: string, divider = false): string[] {
  const parts = divider ? s.split(/(?:^|\s+)\*\*\*+(?=\s|$)/) : s.split(/\n\s*\n/);
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}
