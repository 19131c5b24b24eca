/**
 * Scanning a text for the places an answer can sit: brace groups, `\boxed{}` boxes (and groups of boxes joined
 * only by connectors) and math spans (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`). Every scan is linear in the text length.
 */

/**
 * Read a brace group that opens at `s[open]` (which must be `{`), honouring nesting and escaped braces `\{ \}`.
 * @returns the content and the index just past the closing brace, or null when the group never closes.
 */
export function readBraceGroup(s: string, open: number, limit: number = s.length): { content: string; end: number } | null {
  if (s[open] !== "{") return null;
  let depth = 0;
  for (let i = open; i < limit; i++) {
    const c = s[i];
    if (c === "\\") {
      i++; // skip the escaped character (\{, \}, \\)
      continue;
    }
    if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return { content: s.slice(open + 1, i), end: i + 1 };
    }
  }
  return null;
}

/** A `\boxed{…}` / `\fbox{…}` found in a text: its content and where the command starts and the group ends. */
export interface BoxSpan {
  content: string;
  start: number;
  end: number;
}

/**
 * Every well-formed `\boxed{...}` / `\fbox{...}` (or `\boxed 5`) in `text`, outermost only, in text order.
 * Linear in the text length: an unclosed group stops the scan of every earlier group at its start.
 */
export function allBoxed(text: string): BoxSpan[] {
  const re = /\\(?:boxed|fbox)(?![A-Za-z])/g;
  const starts: number[] = [];
  for (let m = re.exec(text); m !== null; m = re.exec(text)) starts.push(m.index);
  const found: BoxSpan[] = [];
  let limit = text.length;
  for (let k = starts.length - 1; k >= 0; k--) {
    const at = starts[k]!;
    let i = at + (text[at + 1] === "b" ? 6 : 5);
    while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
    if (text[i] === "{") {
      const g = readBraceGroup(text, i, limit);
      if (g !== null) found.push({ content: g.content.trim(), start: at, end: g.end });
      else limit = at;
    } else if (i > at + 4) {
      // "\boxed 5": the next run of non-space characters, minus closing math delimiters
      const m = /^[^\s$]+/.exec(text.slice(i, i + 200));
      if (m) found.push({ content: m[0].replace(/[.,;]$/, ""), start: at, end: i + m[0].length });
    }
  }
  found.reverse();
  // drop boxes nested inside an earlier (outer) box
  const out: BoxSpan[] = [];
  let reach = -1; // end of the last kept box: a box starting before it is nested inside it
  for (const b of found) {
    if (b.end <= reach) continue;
    out.push(b);
    reach = b.end;
  }
  return out;
}

/** Content of the last well-formed `\boxed{...}` / `\fbox{...}` (or `\boxed 5`) in `text`, or null. */
export function lastBoxed(text: string): string | null {
  const all = allBoxed(text);
  return all.length > 0 ? all[all.length - 1]!.content : null;
}

/**
 * Text that may stand between two answers of one list: spaces, math delimiters, commas, "and"/"or"
 * (plain or in `\text{}`), spacing commands, row breaks, and a short label such as `x_2 =`.
 */
const CONNECTOR_RE =
  /^(?:\s|\$|\\[()[\]]|\\(?:quad|qquad|,|;|:|!|enspace)(?![a-zA-Z])|\\\\|&|[,;]|\\text\s*\{\s*(?:,?\s*(?:and|or)\s*)?,?\s*\}|\b(?:and|or)\b|[a-zA-Z](?:_\{?[\w]+\}?)?\s*=)*$/;

/** True when `gap` only joins two answers (see {@link CONNECTOR_RE}); bounded length. */
export function isConnector(gap: string): boolean {
  return gap.length <= 80 && CONNECTOR_RE.test(gap);
}

/**
 * The last group of `\boxed{}` answers: the last box and every box before it that is separated from the next
 * only by connectors (`$\boxed{1}\boxed{2}$`, `\boxed{-2} \text{ and } \boxed{1}`), joined as a list.
 * A box earlier in the text with prose in between (a corrected first attempt) is not part of the group.
 * @returns the joined contents, the start of the group, or null.
 */
export function lastBoxedGroup(text: string): { answer: string; start: number } | null {
  const all = allBoxed(text);
  if (all.length === 0) return null;
  let k = all.length - 1;
  const parts = [all[k]!.content];
  while (k > 0 && isConnector(text.slice(all[k - 1]!.end, all[k]!.start))) {
    k--;
    parts.unshift(all[k]!.content);
  }
  // the same box repeated ("$\boxed{11}$ $\boxed{11}$") is one answer
  const seen = new Set<string>();
  const nonEmpty = parts.filter((p) => {
    const key = p.replace(/\s+/g, "");
    if (key.length === 0 || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (nonEmpty.length === 0) return null;
  return { answer: joinAnswers(nonEmpty), start: all[k]!.start };
}

/**
 * Join several answers into one list. Groups of labelled values (`a=3,b=1` or `a=5,b=2`) are joined with `;`
 * so that each stays one solution; anything else with `, `.
 */
export function joinAnswers(parts: string[]): string {
  const groups = parts.length > 1 && parts.every((p) => p.includes("=")) && parts.some((p) => p.includes(","));
  return parts.join(groups ? "; " : ", ");
}

/** A math span of a text: `$…$` (one line), `$$…$$`, `\(…\)`, `\[…\]`; content without the delimiters. */
export interface MathSpan {
  content: string;
  start: number;
  end: number;
}

/** Prose inside a `$…$` pair means the dollars were currency signs ("costs $5 and the pen $3"). */
function looksLikeProse(content: string): boolean {
  const bare = content.replace(/\\[a-zA-Z]+\s*(?:\{[^{}]*\})?/g, " ");
  return (bare.match(/[a-zA-Z]{3,}/g) ?? []).length >= 2 && /[a-zA-Z]{3,}\s+[a-zA-Z]{3,}/.test(bare);
}

/** Every math span of `text` in order (linear scan; spans longer than 4,000 characters are skipped). */
export function mathSpans(text: string): MathSpan[] {
  const out: MathSpan[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === "\\" && (text[i + 1] === "(" || text[i + 1] === "[")) {
      const close = text.indexOf(text[i + 1] === "(" ? "\\)" : "\\]", i + 2);
      if (close < 0) {
        i += 2;
        continue;
      }
      if (close - i < 4000) out.push({ content: text.slice(i + 2, close), start: i, end: close + 2 });
      i = close + 2;
      continue;
    }
    if (c === "\\") {
      i += 2; // escaped character, e.g. \$
      continue;
    }
    if (c === "$") {
      if (text[i + 1] === "$") {
        const close = text.indexOf("$$", i + 2);
        if (close < 0) {
          i += 2;
          continue;
        }
        if (close - i < 4000) out.push({ content: text.slice(i + 2, close), start: i, end: close + 2 });
        i = close + 2;
        continue;
      }
      // inline: the next unescaped $ on the same line
      let j = i + 1;
      while (j < n && text[j] !== "$" && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
      if (j < n && text[j] === "$") {
        const content = text.slice(i + 1, j);
        if (content.trim().length > 0 && !looksLikeProse(content)) {
          out.push({ content, start: i, end: j + 1 });
          i = j + 1;
        } else i = j; // the closing $ may open the next span
        continue;
      }
      i = j;
      continue;
    }
    i++;
  }
  return out;
}
