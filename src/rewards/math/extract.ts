/**
 * Answer extraction: find the final answer inside a model response (or a reference solution).
 * Modes and their order are configurable (see {@link ExtractionMode}); every scan is linear in the text length.
 */
import type { ExtractedAnswer, ExtractionMode, MathVerifyOptions } from "./types.ts";
import { resolveOptions } from "./types.ts";

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

/** Content of the last well-formed `\boxed{...}` / `\fbox{...}` (or `\boxed 5`) in `text`, or null. */
export function lastBoxed(text: string): string | null {
  const re = /\\(?:boxed|fbox)(?![A-Za-z])/g;
  const starts: number[] = [];
  for (let m = re.exec(text); m !== null; m = re.exec(text)) starts.push(m.index + m[0].length);
  // If the group opened at a later \boxed never closes, no earlier group can close after that point either,
  // so each earlier scan stops at the next start: linear time even for "\boxed{" repeated.
  let limit = text.length;
  for (let k = starts.length - 1; k >= 0; k--) {
    let i = starts[k]!;
    while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
    if (text[i] === "{") {
      const g = readBraceGroup(text, i, limit);
      if (g !== null) return g.content.trim();
      limit = starts[k]!;
    } else if (i > starts[k]!) {
      // "\boxed 5": the next run of non-space characters, minus closing math delimiters
      const m = /^[^\s$]+/.exec(text.slice(i, i + 200));
      if (m) return m[0].replace(/[.,;]$/, "");
    }
  }
  return null;
}

/** Rest of the line after the last `#### ` marker (GSM8K), or null. */
export function lastGsm8k(text: string): string | null {
  const i = text.lastIndexOf("####");
  if (i < 0) return null;
  const line = text.slice(i + 4).split("\n", 1)[0]!.trim().replace(/\.$/, "").trim();
  return line.length > 0 ? line : null;
}

/** Content of the last `<answer>...</answer>` block (an unclosed final `<answer>` runs to the end), or null. */
export function lastAnswerTag(text: string): string | null {
  const lower = text.toLowerCase();
  const open = lower.lastIndexOf("<answer>");
  if (open < 0) return null;
  const close = lower.indexOf("</answer>", open);
  const inner = text.slice(open + 8, close < 0 ? text.length : close).trim();
  if (inner.length === 0) return null;
  return lastBoxed(inner) ?? lastAnswerIs(inner) ?? inner;
}

/** Text after the last "the (final) answer is" / "Answer:" up to the end of that sentence, or null. */
export function lastAnswerIs(text: string): string | null {
  const re = /(?:final answer|answer)\s*(?:is|:|=)\s*:?\s*/gi;
  let last = -1;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) last = m.index + m[0].length;
  if (last < 0) return null;
  let rest = text.slice(last, last + 600).trimStart();
  // "the answer is $\frac{1}{2}$, i.e. one half": a leading math span is the answer
  const span = /^(\$\$?)([^$]+)\1|^\\\(([\s\S]*?)\\\)/.exec(rest);
  if (span) {
    const inner = (span[2] ?? span[3] ?? "").trim();
    if (inner.length > 0) return lastBoxed(inner) ?? inner;
  }
  rest = rest.split("\n", 1)[0]!;
  // end of sentence: a period followed by a space or the end (a decimal point is followed by a digit)
  const stop = /\.(?=\s|$)/.exec(rest);
  if (stop) rest = rest.slice(0, stop.index);
  const boxed = lastBoxed(rest);
  if (boxed !== null) return boxed;
  rest = rest.replace(/\*\*/g, "").trim();
  rest = stripMathDelimiters(rest);
  return rest.length > 0 ? rest : null;
}

/** The last number in the text (integer with separators, decimal, simple fraction a/b or \frac{a}{b}), or null. */
export function lastNumber(text: string): string | null {
  const t = text.replace(/[\u2212\u2013]/g, "-");
  const re = /\\[dt]?frac\{-?\d+\}\{-?\d+\}|-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?(?:\s*\/\s*\d+(?:\.\d+)?)?|-?\.\d+/g;
  let last: string | null = null;
  for (let m = re.exec(t); m !== null; m = re.exec(t)) last = m[0];
  return last;
}

/** The whole text when it is short (≤ 120 characters, one line) and has no prose word (4+ letters outside LaTeX commands). */
export function bareAnswer(text: string): string | null {
  const t = text.trim();
  if (t.length === 0 || t.length > 120 || t.includes("\n")) return null;
  const withoutCommands = t.replace(/\\[a-zA-Z]+(\{[^{}]*\})?/g, " ");
  if (/[a-zA-Z]{4,}/.test(withoutCommands)) return null;
  return stripMathDelimiters(t);
}

/** Remove one layer of surrounding `$...$`, `$$...$$`, `\(...\)` or `\[...\]`. */
export function stripMathDelimiters(s: string): string {
  let t = s.trim();
  for (const [a, b] of [["$$", "$$"], ["$", "$"], ["\\(", "\\)"], ["\\[", "\\]"]] as const) {
    if (t.length >= a.length + b.length && t.startsWith(a) && t.endsWith(b)) {
      t = t.slice(a.length, t.length - b.length).trim();
      break;
    }
  }
  return t;
}

function removeThink(text: string): string {
  // drop every <think>...</think> block (indexOf scan: linear even for many unclosed tags)
  const lower = text.toLowerCase();
  let closed = "";
  let pos = 0;
  for (;;) {
    const open = lower.indexOf("<think>", pos);
    if (open < 0) break;
    const close = lower.indexOf("</think>", open + 7);
    if (close < 0) break;
    closed += text.slice(pos, open) + " ";
    pos = close + 8;
  }
  closed += text.slice(pos);
  // an unclosed trailing <think> means the response never left its reasoning: keep it (extraction may still fail)
  return closed.trim().length > 0 ? closed : text;
}

function runMode(mode: ExtractionMode, text: string): string | null {
  switch (mode) {
    case "answerTag":
      return lastAnswerTag(text);
    case "boxed":
      return lastBoxed(text);
    case "gsm8k":
      return lastGsm8k(text);
    case "answerIs":
      return lastAnswerIs(text);
    case "bareAnswer":
      return bareAnswer(text);
    case "lastNumber":
      return lastNumber(text);
  }
}

/**
 * Extract the final answer from a model response.
 * @param response the full response text (any length; scanning is linear).
 * @param opts `extraction` (mode order), `lastNumberFallback`, `ignoreThink`; other fields are ignored.
 * @returns the answer and the mode that found it, or null when no mode finds one. Never throws.
 * Source: conventions of MATH (Hendrycks et al. 2021, last \boxed{}), GSM8K (Cobbe et al. 2021, "#### n"),
 * and R1-style `<answer>` tags (DeepSeek-R1, arXiv:2501.12948).
 */
export function extractAnswer(response: string, opts: MathVerifyOptions = {}): ExtractedAnswer | null {
  const o = resolveOptions(opts);
  if (typeof response !== "string" || response.length === 0) return null;
  const text = o.ignoreThink ? removeThink(response) : response;
  for (const mode of o.extraction) {
    if (mode === "lastNumber" && !o.lastNumberFallback) continue;
    const a = runMode(mode, text);
    if (a !== null && a.trim().length > 0) return { answer: a.trim(), mode };
  }
  return null;
}

/**
 * Extract the reference answer. A full solution (`\boxed{}`, `#### n`, `<answer>`) is reduced to its answer;
 * anything else is taken whole (never the last-number fallback, so `x^2+1` stays `x^2+1`).
 * @returns the answer, or null for an empty reference.
 */
export function extractReference(reference: string, opts: MathVerifyOptions = {}): ExtractedAnswer | null {
  const o = resolveOptions(opts);
  if (typeof reference !== "string") return null;
  const whole = reference.trim();
  if (whole.length === 0) return null;
  if (o.extractReference) {
    const modes: ExtractionMode[] = ["answerTag", "boxed", "gsm8k"];
    for (const mode of modes) {
      const a = runMode(mode, whole);
      if (a !== null && a.trim().length > 0) return { answer: a.trim(), mode };
    }
  }
  return { answer: stripMathDelimiters(whole), mode: "whole" };
}
