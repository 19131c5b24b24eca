/**
 * Punkt sentence boundary detection (Kiss & Strunk 2006, "Unsupervised Multilingual Sentence
 * Boundary Detection", Computational Linguistics 32(4)) with NLTK's pretrained English parameters —
 * the sentence splitter behind the reference IFEval `count_sentences` and `word_tokenize`.
 *
 * Our own implementation of the published algorithm, following NLTK's decision procedure so
 * counts agree with the reference:
 * 1. candidate ends are `.`, `?`, `!` followed by whitespace + a token or by other punctuation;
 * 2. the words around each candidate are typed (numbers → `##number##`, lower-cased);
 * 3. first pass: a lone `.?!` breaks; `..`+ is an ellipsis; a period-final word is an
 *    abbreviation when its type is a known abbreviation, else a break;
 * 4. second pass: known collocations, the orthographic heuristic (has the next word been seen
 *    lower-case / upper-case mid-sentence?) and frequent sentence starters revise abbreviations,
 *    initials (`J.`) and ordinals (`3.`);
 * 5. closing quotes/brackets after a break are moved into the sentence they close.
 * Parameters: punkt-english.json (abbreviations, collocations, sentence starters, orthographic
 * context of 20k word types).
 */
import { PY_W, PY_WS, pyRstrip } from "./pytext.ts";
import englishParams from "./punkt-english.json" with { type: "json" };

interface PunktParams {
  abbrev: Set<string>;
  collocations: Set<string>;
  starters: Set<string>;
  ortho: Map<string, number>;
}

let params: PunktParams | undefined;
/** Index the English parameters once (≈280 kB JSON, imported as a module so builds carry it). */
function english(): PunktParams {
  if (params) return params;
  const raw = englishParams as { abbrevTypes: string[]; collocations: string[][]; sentStarters: string[]; ortho: Record<string, number> };
  params = {
    abbrev: new Set(raw.abbrevTypes),
    collocations: new Set(raw.collocations.map(([a, b]) => `${a}\u0000${b}`)),
    starters: new Set(raw.sentStarters),
    ortho: new Map(Object.entries(raw.ortho)),
  };
  return params;
}

const ORTHO_BEG_UC = 1 << 1;
const ORTHO_MID_UC = 1 << 2;
const ORTHO_UNK_UC = 1 << 3;
const ORTHO_BEG_LC = 1 << 4;
const ORTHO_MID_LC = 1 << 5;
const ORTHO_UNK_LC = 1 << 6;
const ORTHO_UC = ORTHO_BEG_UC + ORTHO_MID_UC + ORTHO_UNK_UC;
const ORTHO_LC = ORTHO_BEG_LC + ORTHO_MID_LC + ORTHO_UNK_LC;

// Characters that cannot appear inside a word token; `?` and `!` split off, `.` does not.
const NON_WORD = `[)";}\\]*:@'({\\[\u2018\u2019\u201c\u201d\u00ab\u00bb?!]`;
const MULTI_CHAR = `(?:-{2,}|\\.{2,}|(?:\\.[${PY_WS}]){2,}\\.)`;
const WORD_START = `[^("\`{\\[:;&#*@)}\\]\\-,]`;
const S = `[${PY_WS}]`;
const NS = `[^${PY_WS}]`;
const WORD_TOKEN = new RegExp(
  `${MULTI_CHAR}|(?=${WORD_START})${NS}+?(?=${S}|$|${NON_WORD}|${MULTI_CHAR}|,(?=$|${S}|${NON_WORD}|${MULTI_CHAR}))|${NS}`,
  "gu",
);
const PERIOD_CONTEXT = new RegExp(`[.?!](?=(${NON_WORD}|${S}+(${NS}+)))`, "gu");
const REALIGN = new RegExp(`^["')\\]}\u2018\u2019\u201c\u201d\u00ab\u00bb]+?(?:${S}+|(?=--)|(?=\\n)|$)`, "u");
const NUMERIC = /^-?[.,]?\p{Nd}[\p{Nd},.\-]*\.?$/u;
const INITIAL = new RegExp(`^[${PY_W}](?<!\\p{Nd})\\.$`, "u");
const ELLIPSIS = /^\.\.+$/;
const UPPER = /^\p{Uppercase}/u;
const LOWER = /^\p{Lowercase}/u;
const ASCII_WS = new Set([" ", "\t", "\n", "\r", "\x0b", "\x0c"]);

interface Token {
  tok: string;
  type: string;
  periodFinal: boolean;
  sentbreak: boolean;
  abbr: boolean;
  ellipsis: boolean;
}

function makeToken(tok: string): Token {
  const lower = tok.toLowerCase();
  return { tok, type: NUMERIC.test(lower) ? "##number##" : lower, periodFinal: tok.endsWith("."), sentbreak: false, abbr: false, ellipsis: false };
}
const typeNoPeriod = (t: Token) => ([...t.type].length > 1 && t.type.endsWith(".") ? t.type.slice(0, -1) : t.type);
const typeNoSentPeriod = (t: Token) => (t.sentbreak ? typeNoPeriod(t) : t.type);
const firstUpper = (t: Token) => UPPER.test(t.tok);
const firstLower = (t: Token) => LOWER.test(t.tok);

/** Punkt word tokens of a piece of text, line by line (blank lines carry no tokens). */
function wordTokens(text: string): Token[] {
  const out: Token[] = [];
  for (const line of text.split("\n")) {
    WORD_TOKEN.lastIndex = 0;
    for (const m of line.matchAll(WORD_TOKEN)) out.push(makeToken(m[0]));
  }
  return out;
}

function firstPass(t: Token, p: PunktParams): void {
  const tok = t.tok;
  if (tok === "." || tok === "?" || tok === "!") t.sentbreak = true;
  else if (ELLIPSIS.test(tok)) t.ellipsis = true;
  else if (t.periodFinal && !tok.endsWith("..")) {
    const stem = tok.slice(0, -1).toLowerCase();
    if (p.abbrev.has(stem) || p.abbrev.has(stem.split("-").at(-1)!)) t.abbr = true;
    else t.sentbreak = true;
  }
}

/** true = starts a sentence, false = does not, undefined = unknown. */
function orthoHeuristic(t: Token, p: PunktParams): boolean | undefined {
  if (";:,.!?".includes(t.tok) && t.tok.length === 1) return false;
  const ctx = p.ortho.get(typeNoSentPeriod(t)) ?? 0;
  if (firstUpper(t) && ctx & ORTHO_LC && !(ctx & ORTHO_MID_UC)) return true;
  if (firstLower(t) && (ctx & ORTHO_UC || !(ctx & ORTHO_BEG_LC))) return false;
  return undefined;
}

function secondPass(t1: Token, t2: Token, p: PunktParams): void {
  if (!t1.periodFinal) return;
  const typ = typeNoPeriod(t1);
  const nextTyp = typeNoSentPeriod(t2);
  const initial = INITIAL.test(t1.tok);
  if (p.collocations.has(`${typ}\u0000${nextTyp}`)) {
    t1.sentbreak = false;
    t1.abbr = true;
    return;
  }
  if ((t1.abbr || t1.ellipsis) && !initial) {
    if (orthoHeuristic(t2, p) === true) {
      t1.sentbreak = true;
      return;
    }
    if (firstUpper(t2) && p.starters.has(nextTyp)) {
      t1.sentbreak = true;
      return;
    }
  }
  if (initial || typ === "##number##") {
    const starter = orthoHeuristic(t2, p);
    if (starter === false) {
      t1.sentbreak = false;
      t1.abbr = true;
      return;
    }
    if (starter === undefined && initial && firstUpper(t2) && !((p.ortho.get(nextTyp) ?? 0) & ORTHO_LC)) {
      t1.sentbreak = false;
      t1.abbr = true;
    }
  }
}

/** Does this context (word before, end mark, what follows) hold a break with a token after it? */
function containsSentbreak(context: string, p: PunktParams): boolean {
  const toks = wordTokens(context);
  for (const t of toks) firstPass(t, p);
  let found = false;
  for (let i = 0; i < toks.length; i++) {
    if (found) return true;
    const t = toks[i]!;
    if (i + 1 < toks.length) secondPass(t, toks[i + 1]!, p);
    if (t.sentbreak) found = true;
  }
  return false;
}

/** Index of the last ASCII whitespace character, 0 when none (a quirk kept from NLTK). */
function lastWhitespace(s: string): number {
  for (let i = s.length - 1; i >= 0; i--) if (ASCII_WS.has(s[i]!)) return i;
  return 0;
}

/** Sentence spans [start, end) in UTF-16 offsets, after boundary realignment. */
export function sentenceSpans(text: string): [number, number][] {
  const p = english();
  const raw: [number, number][] = [];
  let lastBreak = 0;
  const decide = (m: RegExpExecArray, prevStart: number, prevStop: number) => {
    const context = text.slice(prevStart, prevStop) + m[0] + m[1]!;
    if (!containsSentbreak(context, p)) return;
    const end = m.index + m[0].length;
    raw.push([lastBreak, end]);
    lastBreak = m[2] !== undefined ? end + (m[1]!.length - m[2].length) : end;
  };
  let prevStart = 0;
  let prevStop = 0;
  let prev: RegExpExecArray | undefined;
  PERIOD_CONTEXT.lastIndex = 0;
  for (let m = PERIOD_CONTEXT.exec(text); m; m = PERIOD_CONTEXT.exec(text)) {
    const before = text.slice(prevStop, m.index);
    let wordStart = lastWhitespace(before);
    wordStart = wordStart ? wordStart + prevStop + 1 : prevStart;
    if (prev && prevStop <= wordStart) decide(prev, prevStart, prevStop);
    prev = m;
    prevStart = wordStart;
    prevStop = m.index;
  }
  if (prev) decide(prev, prevStart, prevStop);
  raw.push([lastBreak, pyRstrip(text).length]);

  const out: [number, number][] = [];
  let realign = 0;
  for (let i = 0; i < raw.length; i++) {
    const s1: [number, number] = [raw[i]![0] + realign, raw[i]![1]];
    const s2 = raw[i + 1];
    const nonEmpty = s1[1] > s1[0];
    if (!s2) {
      if (nonEmpty) out.push(s1);
      continue;
    }
    const m = REALIGN.exec(text.slice(s2[0], Math.max(s2[0], s2[1])));
    if (m) {
      out.push([s1[0], s2[0] + pyRstrip(m[0]).length]);
      realign = m[0].length;
    } else {
      realign = 0;
      if (nonEmpty) out.push(s1);
    }
  }
  return out;
}

/** The sentences of `text` (NLTK `sent_tokenize` with the English model). */
export function sentTokenize(text: string): string[] {
  return sentenceSpans(text).map(([a, b]) => text.slice(a, b));
}

/** Number of sentences, as the reference IFEval `count_sentences` counts them. */
export function countSentences(text: string): number {
  return sentenceSpans(text).length;
}
