/**
 * Answer extraction: find the final answer inside a model response (or a reference solution).
 * Modes and their order are configurable (see {@link ExtractionMode}); every scan is linear in the text length.
 */
import { foldUnicode, normalizeAnswer, numberWithWords } from "./normalize.ts";
import { allBoxed, joinAnswers, lastBoxedGroup, mathSpans, type MathSpan } from "./spans.ts";
import type { ExtractedAnswer, ExtractionMode, MathVerifyOptions } from "./types.ts";
import { resolveOptions } from "./types.ts";

export { allBoxed, isConnector, lastBoxed, lastBoxedGroup, mathSpans, readBraceGroup, type BoxSpan, type MathSpan } from "./spans.ts";

/** Rest of the line after the last `#### ` marker (GSM8K), or null. */
export function lastGsm8k(text: string): string | null {
  const i = text.lastIndexOf("####");
  if (i < 0) return null;
  const line = text.slice(i + 4).split("\n", 1)[0]!.trim().replace(/\.$/, "").trim();
  return line.length > 0 ? line : null;
}

/** The value of one `<answer>` block's content: its `\boxed{}` group, its "answer is" statement, or all of it. */
function tagValue(inner: string): string | null {
  const t = inner.trim();
  return t.length === 0 ? null : (lastBoxedGroup(t)?.answer ?? lastAnswerIs(t) ?? t);
}

/** Contents of every `<answer>...</answer>` block in order (an unclosed final `<answer>` runs to the end). Linear. */
export function answerTags(text: string): string[] {
  const lower = text.toLowerCase();
  const out: string[] = [];
  for (let open = lower.indexOf("<answer>"); open >= 0; ) {
    const close = lower.indexOf("</answer>", open + 8);
    const next = lower.indexOf("<answer>", open + 8);
    // an unclosed tag followed by another opening one is cut there
    const end = close < 0 ? (next < 0 ? text.length : next) : next >= 0 && next < close ? next : close;
    out.push(text.slice(open + 8, end));
    open = next;
  }
  return out;
}

/** Value of the last `<answer>...</answer>` block (an unclosed final `<answer>` runs to the end), or null. */
export function lastAnswerTag(text: string): string | null {
  const tags = answerTags(text);
  return tags.length === 0 ? null : tagValue(tags[tags.length - 1]!);
}

/**
 * Whether the `<answer>` blocks hedge: two of them state different values (`<answer>8</answer> <answer>7</answer>`),
 * compared after normalisation. The same value repeated is one answer; empty blocks state nothing.
 */
export function answerTagsHedge(text: string, normalize: (s: string) => string): boolean {
  const seen = new Set<string>();
  for (const t of answerTags(text)) {
    const v = tagValue(t);
    if (v !== null) seen.add(normalize(v).replace(/\s+/g, ""));
  }
  return seen.size > 1;
}

/**
 * The sentence that starts at `text[0]`: up to a sentence end (`.`, `!`, `?` followed by a space or the end,
 * outside math spans), a blank line, "I hope", or 400 characters.
 */
export function firstSentence(text: string): string {
  const t = text.slice(0, 600);
  const spans = mathSpans(t);
  let cut = Math.min(t.length, 400);
  const blank = t.search(/\n\s*\n|I hope/);
  if (blank >= 0) cut = Math.min(cut, blank);
  const re = /[.!?](?=\s|$)|\n(?=\s*[-*#]|\s*\*\*)/g;
  for (let m = re.exec(t); m !== null; m = re.exec(t)) {
    if (m.index >= cut) break;
    if (spans.some((s) => s.start < m!.index && m!.index < s.end)) continue;
    // "e.g." / "i.e." / "vs." / "approx." are not sentence ends
    if (/\b(?:e\.g|i\.e|vs|approx)$/i.test(t.slice(Math.max(0, m.index - 6), m.index))) continue;
    cut = m.index;
    break;
  }
  return t.slice(0, cut);
}

/** Join the contents of consecutive math spans separated only by connectors; the last such group of `spans`. */
function lastSpanGroup(text: string, spans: MathSpan[]): { answer: string; start: number; end: number } | null {
  if (spans.length === 0) return null;
  let k = spans.length - 1;
  const parts = [spans[k]!.content.trim()];
  while (k > 0 && /^\s*(?:,|,?\s*(?:and|or)|;)?\s*$/.test(text.slice(spans[k - 1]!.end, spans[k]!.start))) {
    k--;
    parts.unshift(spans[k]!.content.trim());
  }
  const answer = joinAnswers(parts.filter((p) => p.length > 0));
  return answer.length > 0 ? { answer, start: spans[k]!.start, end: spans[spans.length - 1]!.end } : null;
}

/** A math span that only names a variable (`$n$`, `$x_1$`, `$AB$`), never an answer on its own. */
function isBareVariable(content: string): boolean {
  return /^\s*(?:[a-zA-Z]{1,2}|\\[a-zA-Z]+)(?:_\{?\w+\}?)?\s*$/.test(content) && !/^\s*\\(?:pi|infty|emptyset|varnothing)\s*$/.test(content);
}

/** A lead-in word that is not part of the value ("The largest $n$ is 34": value after "is"). */
const VERB_RE = /\s(?:is|are|was|equals|be|becomes|gives|yields)\s+|\s*=\s*|:\s+/g;

/**
 * The value stated by a short sentence (the text after "final answer", "the answer is", "Answer:").
 * A sentence that starts with a value keeps that value (`5 because x = 3` → `5`); one that starts with words
 * takes what follows its last verb or `=` (`The largest $n$ is 34` → `34`); math spans joined by connectors
 * become one list (`$1$ and $-2$` → `1, -2`); a `\boxed{}` group inside wins.
 * @returns the value text, or null for an empty sentence.
 */
export function statementValue(raw: string, depth = 0): string | null {
  let s = firstSentence(raw.replace(/^\s*(?:\*\*|:|is\b|are\b|=)+\s*/i, "").replace(/^\s*(?:\*\*|:)+\s*/, ""));
  const boxed = lastBoxedGroup(s);
  if (boxed !== null) return boxed.answer;
  s = s.replace(/\*\*/g, "").replace(/^["'“]+|["'”]+$/g, "").trim();
  if (s.length === 0) return null;
  const spans = mathSpans(s);
  const startsWithValue = !/^[A-Za-z]{2,}/.test(s) || /^(?:and|or)\b/i.test(s);
  if (!startsWithValue && depth < 2) {
    // "The largest $n$ is 34", "the integers are $1$ and $-2$": the value follows the last verb outside math
    let cut = -1;
    VERB_RE.lastIndex = 0;
    for (let m = VERB_RE.exec(s); m !== null; m = VERB_RE.exec(s)) {
      const at = m.index;
      if (spans.some((sp) => sp.start <= at && at < sp.end)) continue;
      cut = at + m[0].length;
    }
    if (cut > 0 && cut < s.length) return statementValue(s.slice(cut), depth + 1);
  }
  if (spans.length > 0) {
    if (spans[0]!.start === 0 || /^[\s"'(]*$/.test(s.slice(0, spans[0]!.start))) {
      // a leading span (group): the value, even when words follow ("$5$ cm", "$\frac12$, i.e. one half")
      const first = lastSpanGroup(s, spans.slice(0, leadingGroupLength(s, spans)));
      if (first) return first.answer;
    }
    const group = lastSpanGroup(s, spans);
    if (group && !startsWithValue) return group.answer;
  }
  // a plain value at the start: cut at the first prose word (3+ letters, not a command, not and/or)
  const word = /(?<![\\a-zA-Z])(?!(?:and|or|pi|sqrt|frac|infty|i|e)\b)[a-zA-Z]{3,}/.exec(s);
  let value = word && startsWithValue ? s.slice(0, word.index) : s;
  value = value.replace(/[\s,;:]+$/, "").trim();
  const lead = startsWithValue ? /^(-?\d[\d.,/]*%?)\s+([a-zA-Z][a-zA-Z\s'-]*)(.?)/.exec(s) : null;
  if (lead && !/[\d$\\]/.test(lead[3]!)) {
    // a number followed by words is read as written: "5 apples" is 5, "3 hundred" 300, "5 below zero" not 5
    return numberWithWords(lead[1]!, lead[2]!, "strict") ?? `${lead[1]} ${lead[2]!.trim()}`;
  }
  if (value.length === 0) value = s;
  return stripMathDelimiters(value.replace(/[.]$/, "").trim()) || null;
}

/** How many spans from the first are joined by connectors (the leading group). */
function leadingGroupLength(s: string, spans: MathSpan[]): number {
  let k = 1;
  while (k < spans.length && /^\s*(?:,|,?\s*(?:and|or)|;)?\s*$/.test(s.slice(spans[k - 1]!.end, spans[k]!.start))) k++;
  return k;
}

/** A negation right before an answer ("is not \\boxed{5}", "definitely not $5$", "isn't 5"). */
const NEGATED_BEFORE = /(?:\bnot|n't|\bnever|\bno)\s*(?:\\text\{\s*\}|[$(\\[]|\\\(|\\\[)*\s*$/i;
/** A negation right after an answer ("\\boxed{5} is not correct", "$5$ is wrong", "\\boxed{5}\\text{ is not the answer}"). */
const NEGATED_AFTER = /^(?:[\s$).\]]|\\[)\]])*(?:\\text\{\s*)?(?:(?:is|was|'s)\s+(?:not|never)\s+(?:the\s+(?:\w+\s+)?answer|an?\s+answer|correct|right|valid|true|it)\b|(?:is|was|'s|isn't|wasn't)\s*(?:wrong|incorrect|false)\b|(?:isn't|wasn't)\s+(?:the\s+(?:\w+\s+)?answer|correct|right|it)\b|(?:would be |is )?(?:wrong|incorrect)\b)/i;

/** Whether the answer written at text[start, end) is negated by the words around it. */
export function isNegated(text: string, start: number, end: number): boolean {
  return NEGATED_BEFORE.test(text.slice(Math.max(0, start - 40), start)) || NEGATED_AFTER.test(text.slice(end, end + 60));
}

/** Text after the last "the (final) answer is" / "Answer:" (see {@link statementValue}), or null. */
export function lastAnswerIs(text: string): string | null {
  const re = /answer\s*(?:\*\*)?\s*(?:is|:|=)/gi;
  let last = -1;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) last = m.index + m[0].length;
  if (last < 0) return null;
  return statementValue(text.slice(last, last + 800));
}

/**
 * "Final answer" statement: the text after the last "final answer" (`The final answer is $x$. I hope…`,
 * `Final Answer: The largest $n$ is 34.`, `**Final Answer** …`), read by {@link statementValue}.
 * Returns null when the last `\boxed{}` group comes after it (then the box is the final word).
 */
export function lastFinalAnswer(text: string): string | null {
  const re = /final\s+answer/gi;
  let last = -1;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) last = m.index + m[0].length;
  if (last < 0) return null;
  const box = lastBoxedGroup(text);
  if (box !== null && box.start >= last) return null;
  const rest = text.slice(last, last + 800);
  // a statement: "final answer: …", "final answer is …", "**Final Answer** …" on its own, or "… is …" soon after
  if (!/^\s*(?:\*\*|#+)?\s*(?::|is\b|=|\n|\*\*|$)/i.test(rest) && !/^[^.\n]{0,100}?\s(?:is|are)\s/i.test(rest)) return null;
  return statementValue(rest);
}

/**
 * The last math span group of the text, unless a stand-alone number comes after it (then the number is the
 * answer, see {@link lastNumber}). Spans that only name a variable (`$n$`) are skipped.
 */
export function lastMathSpan(text: string): string | null {
  const spans = mathSpans(text).filter((s) => !isBareVariable(s.content));
  const group = lastSpanGroup(text, spans);
  if (group === null) return null;
  if (numberMatches(text.slice(group.end)).length > 0) return null;
  if (isNegated(text, group.start, group.end)) return null;
  return stripMathDelimiters(group.answer) || null;
}

/** Numbers outside math spans and words: integers with separators, decimals, decimal commas, a/b, \frac{a}{b}. */
function numberMatches(text: string): { text: string; end: number }[] {
  const t = text.replace(/[\u2212\u2013]/g, "-");
  const spans = mathSpans(t);
  const re = /(?<![\w\\.,])(?:\\[dt]?frac\{-?\d+\}\{-?\d+\}|-?\d+:\d+(?![\d:])|-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+,\d+(?![\d,])|-?\d+(?:\.\d+)?(?:\s*\/\s*\d+(?:\.\d+)?)?|-?\.\d+)(?:\s*(?:\\?%|percent\b))?(?![a-zA-Z]*\d)/g;
  const out: { text: string; end: number }[] = [];
  for (let m = re.exec(t); m !== null; m = re.exec(t)) {
    const at = m.index;
    if (spans.some((s) => s.start <= at && at < s.end)) continue;
    // a digit glued to letters on the left is part of a word or a name (AZYUK2A, x2, H2O)
    if (at > 0 && /[a-zA-Z_]/.test(t[at - 1]!)) continue;
    out.push({ text: m[0], end: at + m[0].length });
  }
  return out;
}

/**
 * A bound or an approximation from below/above right before a number ("at least 7", "more than 7", "up to 7",
 * "almost 7", "≥ 7"): the number is then a bound, not the answer, and is kept with its qualifier (it equals no bare
 * number). "approximately / about / roughly 7" are not here: a rounded value stated as such is read as the value.
 */
const QUALIFIED_BEFORE =
  /(?:^|[^a-zA-Z])((?:(?:no|not)\s+)?(?:at\s+(?:least|most)|(?:more|less|fewer|greater|larger|smaller|higher|lower)\s+than|up\s+to|(?:just\s+|well\s+)?(?:over|under|above|below|beyond)|almost|nearly|exceeding|upwards\s+of|in\s+excess\s+of)|(?<=^|\s)(?:>=?|<=?|\\(?:geq?|leq?|gt|lt|geqslant|leqslant)(?![a-zA-Z])))[\s$]*$/i;

/**
 * The last number outside math spans and words (integer with separators, decimal, `a/b`, `\frac{a}{b}`), or null.
 * Words right after it are read leniently ({@link numberWithWords}): a magnitude applies (`3 hundred people`), a
 * qualifier keeps them (`5 below zero`, `12 or thirteen` are not 5 and 12).
 */
export function lastNumber(text: string): string | null {
  const all = numberMatches(text);
  // "it is 12, not 13": a negated number is passed over for the one before it
  let k = all.length - 1;
  while (k > 0 && isNegated(text, all[k]!.end - all[k]!.text.length, all[k]!.end)) k--;
  const last = all[k];
  if (last === undefined) return null;
  if (isNegated(text, last.end - last.text.length, last.end)) return `not ${last.text}`;
  const bound = QUALIFIED_BEFORE.exec(text.slice(Math.max(0, last.end - last.text.length - 40), last.end - last.text.length));
  if (bound !== null) return `${bound[1]!.replace(/\s+/g, " ").trim()} ${last.text}`;
  const words = /^[ \t]+([a-zA-Z][a-zA-Z \t'-]*)/.exec(text.slice(last.end, last.end + 200).replace(/[\u2212\u2013]/g, "-"));
  if (words === null || /%$/.test(last.text)) return last.text;
  return numberWithWords(last.text, words[1]!, "lenient") ?? `${last.text} ${words[1]!.trim()}`;
}

/** The whole text when it is short (≤ 120 characters, one line) and has no prose word (4+ letters outside LaTeX commands). */
export function bareAnswer(text: string): string | null {
  const t = text.trim();
  if (NUMBER_WORD_RE.test(t) || TEXT_ANSWER_RE.test(t)) return t.replace(/[.!]$/, "");
  if (t.length === 0 || t.length > 120 || t.includes("\n")) return null;
  const withoutCommands = t.replace(/\\[a-zA-Z]+(\{[^{}]*\})?/g, " ");
  if (/[a-zA-Z]{4,}/.test(withoutCommands)) return null;
  // two words in a row are prose ("so it is 45"), whatever their length
  if (/(?<![a-zA-Z_\\])(?!(?:and|or)\b)[a-zA-Z]{2,}\s+(?!(?:and|or)\b)[a-zA-Z]{2,}(?![a-zA-Z])/.test(withoutCommands)) return null;
  // a lone "$...$" pair around prose is currency, not math
  if ((t.match(/\$/g) ?? []).length % 2 === 1) return null;
  // words outside the math spans ("so $x = 2$.") make it a sentence: lastMath reads it
  const spans = mathSpans(t);
  if (spans.length > 0) {
    let outside = t;
    for (const sp of [...spans].reverse()) outside = outside.slice(0, sp.start) + " " + outside.slice(sp.end);
    if (/[a-zA-Z]{2,}/.test(outside.replace(/\\[a-zA-Z]+(\{[^{}]*\})?/g, " "))) return null;
  }
  return stripMathDelimiters(t);
}

/** A short textual answer as the whole response ("No solution.", "Undefined", "Does not exist"). */
const TEXT_ANSWER_RE = /^(?:no (?:real )?solutions?|none|undefined|does not exist|dne|all real numbers|infinitely many|neither|both|true|false|even|odd|always|never)[.!]?$/i;

/** A number spelled out as the whole response ("seven", "Twelve."); normalize.ts turns it into digits. */
const NUMBER_WORD_RE = /^(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|one hundred|thousand|one thousand)[.!]?$/i;

/** Two words in a row outside math spans and LaTeX commands: the text is prose, not a bare answer. */
function isProse(text: string): boolean {
  let outside = text;
  for (const sp of mathSpans(text).reverse()) outside = outside.slice(0, sp.start) + " " + outside.slice(sp.end);
  outside = outside.replace(/\\[a-zA-Z]+(\{[^{}]*\})?/g, " ");
  return /(?<![a-zA-Z])[a-zA-Z]{2,}\s+[a-zA-Z]{2,}(?![a-zA-Z])/.test(outside) && !/^\s*[a-zA-Z]+(?:\s+[a-zA-Z]+)?\s*$/.test(outside);
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

/**
 * Reasoning-block tags as chat templates of reasoning models write them, any case: `<think>` (DeepSeek-R1, Qwen3),
 * `<thinking>`, `<reasoning>`, `<seed:think>` (Seed-OSS), `◁think▷` (Kimi), `[THINK]` (Magistral), `<|begin_of_thought|>`
 * (OpenThoughts);
 * spaces inside the brackets tolerated. Group 1 is the `/` or `end` of a closing tag.
 */
const THINK_TAG_RE = /<\s*(\/?)\s*(?:seed:)?(?:think|thinking|reasoning)\s*>|(?:\u25c1|\[)\s*(\/?)\s*think\s*(?:\u25b7|\])|<\|(begin|end)_of_thought\|>/gi;

/**
 * The part of a response outside its reasoning. The answer is what follows the last closing tag — text before a
 * lone `</think>` is reasoning (templates that open `<think>` in the prompt) — and an opening tag that never
 * closes starts reasoning that runs to the end (a box inside it is not an answer). No tag: the whole text.
 * Linear (one regex scan).
 */
export function removeThink(text: string): string {
  // harmony (gpt-oss): the answer is the last "final" channel message; an analysis channel without one is reasoning only
  const harmony = /<\|channel\|>\s*(final|analysis|commentary)\s*(?:<\|constrain\|>[^<]*)?<\|message\|>/gi;
  let final = -1;
  let channels = 0;
  for (let m = harmony.exec(text); m !== null; m = harmony.exec(text)) {
    channels++;
    if (m[1]!.toLowerCase() === "final") final = m.index + m[0].length;
  }
  if (channels > 0) return final < 0 ? "" : text.slice(final).split(/<\|(?:end|return|call)\|>/, 1)[0]!;
  let lastClose = -1;
  let openAfter = -1;
  THINK_TAG_RE.lastIndex = 0;
  for (let m = THINK_TAG_RE.exec(text); m !== null; m = THINK_TAG_RE.exec(text)) {
    const closing = m[1] === "/" || m[2] === "/" || m[3]?.toLowerCase() === "end";
    if (closing) {
      lastClose = m.index + m[0].length;
      openAfter = -1;
    } else if (openAfter < 0) openAfter = m.index;
  }
  const from = lastClose < 0 ? 0 : lastClose;
  return text.slice(from, openAfter < 0 ? text.length : openAfter);
}

function runMode(mode: ExtractionMode, text: string): string | null {
  switch (mode) {
    case "answerTag":
      return lastAnswerTag(text);
    case "boxed":
      return lastBoxedGroup(text)?.answer ?? null;
    case "finalAnswer":
      return lastFinalAnswer(text);
    case "lastMath":
      return lastMathSpan(text);
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
  const text = foldUnicode(o.ignoreThink ? removeThink(response) : response);
  // the last box is the model's last commitment: an empty one ("\boxed{}") is no answer, not a cue to go back
  const boxes = allBoxed(text);
  const lastBox = boxes[boxes.length - 1];
  if (lastBox !== undefined && lastBox.content.replace(/\\[,;:! ]|\s|\$/g, "").length === 0) return null;
  // differing <answer> blocks are a hedge: no answer (not a cue to read a box or a number instead)
  if (o.extraction.includes("answerTag") && answerTagsHedge(text, (s) => normalizeAnswer(s, o.stripUnits, o.decimalComma))) return null;
  for (const mode of o.extraction) {
    if (mode === "lastNumber" && !o.lastNumberFallback) continue;
    const a = runMode(mode, text);
    if (a !== null && a.trim().length > 0) {
      if (mode === "boxed" && o.extraction.includes("answerIs")) {
        // a later "the answer is 4" corrects an earlier box ("a common mistake is \boxed{3}; the answer is 4")
        const later = answerStatementAfter(text, lastBox?.end ?? 0);
        if (later !== null) return { answer: later, mode: "answerIs" };
      }
      // a negated last box ("the answer is not \boxed{5}", "\boxed{5} is wrong") is no answer
      if (mode === "boxed" && lastBox !== undefined && isNegated(text, lastBoxedGroup(text)?.start ?? lastBox.start, lastBox.end)) return null;
      return { answer: a.trim(), mode };
    }
  }
  return null;
}

/** Adverbs before a restated value ("the answer is therefore 8", "indeed 7"). */
const ADVERBS = /^(?:(?:therefore|thus|so|hence|indeed|clearly|then|again|also|still|just|simply|obviously|exactly|precisely|finally)\b[\s,:]*)+/i;
/**
 * A statement that points back at the box ("the answer is the same", "… is correct", "… is as boxed above") or
 * describes it ("… is independent of the order", "… is an integer", "… is greater than 5"): it keeps the box.
 */
const POINTS_BACK =
  /^(?:(?:the|as|in|shown|given|written|also|always|indeed)\s+)*(?:same|correct|right|above|below|boxed|box|shown|given|stated|found|computed|this|that|it|as follows|follows|(?:in)?dependent|unique|positive|negative|nonnegative|non-negative|an?\s+(?:\w+\s+)?(?:integer|number|fraction|decimal|prime|rational|irrational|whole)|integer|rational|irrational|real|exact|valid|reasonable|plausible|consistent|simplified|simplest|lowest|verified|confirmed|checked|greater|less|smaller|larger|bigger|between|close|within)\b/i;

/**
 * A value stated by "the answer is …" / "Answer: …" after position `from` (the last box's end): the last such
 * statement wins over the box, even when it is not math ("a common mistake is \boxed{1/2}; the answer is none of the
 * above" states "none of the above"), unless it only points back at the box ("the answer is the same", "… is
 * correct", "… as boxed above"). Adverbs before a value go ("the answer is therefore 8" states 8).
 * @returns the value, or null when there is no such statement or it points back.
 */
function answerStatementAfter(text: string, from: number): string | null {
  const re = /answer\s*(?:\*\*)?\s*(?:is|:|=)/gi;
  re.lastIndex = from;
  let last = -1;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) last = m.index + m[0].length;
  if (last < 0) return null;
  const rest = text.slice(last, last + 800);
  const v = statementValue(rest)?.trim();
  if (!v) return null;
  if (/^[\s:*]*(?:[-+\d$]|\\[([a-zA-Z])/.test(rest)) return v;
  const bare = v.replace(ADVERBS, "").trim();
  if (bare.length === 0 || POINTS_BACK.test(bare)) return null;
  return bare === v ? v : (statementValue(bare)?.trim() || null);
}

/**
 * Extract the reference answer. A full solution (`\boxed{}`, `#### n`, `<answer>`) is reduced to its answer;
 * anything else is taken whole (never the last-number fallback, so `x^2+1` stays `x^2+1`).
 * @returns the answer, or null for an empty reference.
 */
export function extractReference(reference: string, opts: MathVerifyOptions = {}): ExtractedAnswer | null {
  const o = resolveOptions(opts);
  if (typeof reference !== "string") return null;
  const whole = foldUnicode(reference).trim();
  if (whole.length === 0) return null;
  if (o.extractReference) {
    // a reference written as sentences ("The answer is $5$.", "Final Answer: … $28\%$. I hope …") is read like a
    // response, except for the last-number fallback
    const modes: ExtractionMode[] = isProse(whole)
      ? ["answerTag", "finalAnswer", "boxed", "gsm8k", "answerIs", "lastMath"]
      : ["answerTag", "boxed", "gsm8k"];
    for (const mode of modes) {
      const a = runMode(mode, whole);
      if (a !== null && a.trim().length > 0) return { answer: a.trim(), mode };
    }
  }
  return { answer: stripMathDelimiters(whole), mode: "whole" };
}
