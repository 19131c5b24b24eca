/**
 * LaTeX / plain-text normalisation of an extracted answer: unicode, math delimiters, spacing commands,
 * `\left`/`\right`, text wrappers, degrees, currency, units and thousands separators.
 * The output is still LaTeX-ish text; src/rewards/math/parse.ts turns it into structure.
 */
import { readBraceGroup } from "./spans.ts";
import type { DecimalCommaMode } from "./types.ts";

/** Trailing words removed by `stripUnits` (lower case, singular and plural spellings). */
const UNIT_WORDS = new Set(
  (
    "mm cm dm m km meter meters metre metres millimeter millimeters centimeter centimeters kilometer kilometers " +
    "in inch inches ft foot feet yd yard yards mi mile miles mph kph km/h m/s " +
    "mg g kg gram grams kilogram kilograms lb lbs pound pounds oz ounce ounces ton tons tonne tonnes " +
    "ml l liter liters litre litres gallon gallons quart quarts pint pints cup cups " +
    "s sec secs second seconds min mins minute minutes h hr hrs hour hours day days week weeks month months year years " +
    "dollar dollars cent cents usd euro euros eur yen pence penny pennies " +
    "unit units degree degrees deg radian radians rad sq square cubic " +
    "people persons person students student times items item pages page points point " +
    "apples cookies books marbles cars miles/hour km/hr gm gms acre acres hectare hectares decade decades century centuries " +
    "sheep children men women mice geese teeth fish deer series species o'clock am pm a.m p.m ml/min"
  ).split(/\s+/),
);

const NUMBER_WORDS: Record<string, string> = Object.fromEntries(
  (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen " +
    "eighteen nineteen twenty"
  )
    .split(" ")
    .map((w, i) => [w, String(i)] as const)
    .concat([["thirty", "30"], ["forty", "40"], ["fifty", "50"], ["sixty", "60"], ["seventy", "70"], ["eighty", "80"],
      ["ninety", "90"], ["hundred", "100"], ["one hundred", "100"], ["thousand", "1000"], ["one thousand", "1000"], ["one half", "1/2"],
      ["a half", "1/2"], ["half", "1/2"]]),
);

/** Zero-width and bidirectional formatting characters (Arabic text carries RLM marks): removed. */
const INVISIBLE_RE = /[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
/** Decimal digits of every script (Arabic-Indic, Devanagari, fullwidth, mathematical bold…) and fullwidth signs. */
const FOREIGN_DIGIT_RE = /(?![0-9])\p{Nd}|[\u066b\u066c\u060c\uff0b\uff0c\uff0d\uff0e\uff0f\uff1d\uff08\uff09\u2010\u2011\u2212\ufe63\u2044]/gu;
const SIGNS: Record<string, string> = {
  "\u066b": ".", "\u066c": ",", "\u060c": ",", "\uff0b": "+", "\uff0c": ",", "\uff0d": "-", "\uff0e": ".", "\uff0f": "/",
  "\uff1d": "=", "\uff08": "(", "\uff09": ")", "\u2010": "-", "\u2011": "-", "\u2212": "-", "\ufe63": "-", "\u2044": "/",
};

/** The value of a decimal digit of any script: every Unicode `Nd` run is ten (or a multiple of ten) code points from 0. */
const DIGIT_CACHE = new Map<string, string>();
function digitValue(ch: string): string {
  const hit = DIGIT_CACHE.get(ch);
  if (hit !== undefined) return hit;
  let cp = ch.codePointAt(0)!;
  const start = cp;
  while (start - cp < 60 && /\p{Nd}/u.test(String.fromCodePoint(cp - 1))) cp--;
  const v = String((start - cp) % 10);
  if (DIGIT_CACHE.size < 1000) DIGIT_CACHE.set(ch, v);
  return v;
}

/**
 * Fold what only looks different: digits of other scripts (`٣`, `１２`, `𝟕`) become ASCII digits, fullwidth
 * signs and minus signs (`−`, `－`) ASCII signs, and zero-width / bidi formatting characters (`1\u200b2`) go.
 * Linear; applied to whole responses before extraction and to answers before normalisation.
 */
export function foldUnicode(s: string): string {
  return s.replace(INVISIBLE_RE, "").replace(FOREIGN_DIGIT_RE, (c) => SIGNS[c] ?? digitValue(c));
}

/** Unwrap `\cmd{...}` (keeping the content) for every command in `cmds`, handling nested braces. */
function unwrapCommands(s: string, cmds: readonly string[]): string {
  const re = new RegExp(`\\\\(?:${cmds.join("|")})\\s*(?=\\{)`, "g");
  let out = s;
  for (let guard = 0; guard < 64; guard++) {
    re.lastIndex = 0;
    const m = re.exec(out);
    if (!m) break;
    const open = m.index + m[0].length;
    const g = readBraceGroup(out, open);
    if (!g) {
      out = out.slice(0, m.index) + out.slice(open); // unclosed: drop the command, keep the rest
      continue;
    }
    out = out.slice(0, m.index) + g.content + out.slice(g.end);
  }
  return out;
}

const TEXT_COMMANDS = [
  "text", "textbf", "textit", "textrm", "textnormal", "textsf", "texttt", "mathrm", "mathbf", "mathit", "mathsf",
  "mathtt", "mathnormal", "mbox", "hbox", "operatorname", "boldsymbol", "bm", "boxed", "fbox", "emph", "pmb",
  "overline", "underline", "vec", "overrightarrow", "mathcal", "mathfrak", "mathscr",
];

/**
 * Normalise LaTeX wrappers and spacing without changing the mathematical content.
 * @param s an extracted answer.
 * @param stripUnits remove trailing unit words (`5\text{ cm}^2` → `5`) and "square/cubic" prefixes.
 * @returns the normalised string (may be empty). Never throws.
 */
export function normalizeAnswer(s: string, stripUnits: boolean, decimalComma: DecimalCommaMode = "auto"): string {
  // protect LaTeX row separators (\\) from the single-backslash rules below
  let t = foldUnicode(s).replace(/\\\\/g, "\u0001");
  // thousands separators written for TeX: 11,\! 111,\! 100 and 14{,}916 / 14 {, }916 (groups of three digits)
  t = t.replace(/(\d),\\!\s*(?=\d{3}(?!\d))/g, "$1").replace(/(\d)\s*\{\s*,\s*\}\s*(?=\d{3}(?!\d))/g, "$1");
  // decimal commas, when the caller says every comma between digits is one
  if (decimalComma === "always") t = t.replace(/(\d)(?:,|\{,\})(?=\d)/g, "$1.");
  // unicode
  t = t
    .replace(/[\u2212\u2012\u2013\u2014\uFE63\uFF0D]/g, "-")
    .replace(/[\u00d7\u22c5\u00b7\u2219]/g, "\\cdot ")
    .replace(/\u00f7/g, "/")
    .replace(/\u03c0/g, "\\pi ")
    .replace(/\u221e/g, "\\infty ")
    .replace(/\u221a\s*(\d+(?:\.\d+)?)/g, "\\sqrt{$1}")
    .replace(/\u221a/g, "\\sqrt")
    .replace(/\u2264/g, "\\le ")
    .replace(/\u2265/g, "\\ge ")
    .replace(/\u2260/g, "\\ne ")
    .replace(/\u222a/g, "\\cup ")
    .replace(/\u2229/g, "\\cap ")
    .replace(/\u2205/g, "\\emptyset ")
    .replace(/[\u00b0\u2103]/g, " ")
    .replace(/[\u00a0\u2009\u202f\u2002\u2003]/g, " ")
    .replace(/\u00b2/g, "^2")
    .replace(/\u00b3/g, "^3")
    .replace(/[\u00bd]/g, "1/2")
    .replace(/[\u00bc]/g, "1/4")
    .replace(/[\u00be]/g, "3/4");
  // markdown bold around the whole answer: **35**
  t = t.replace(/^\s*\*\*([\s\S]*?)\*\*\s*$/, "$1");
  // currency and math delimiters
  t = t.replace(/\\\$/g, " ").replace(/\$/g, " ");
  t = t.replace(/\\left\s*\./g, "").replace(/\\right\s*\./g, "");
  t = t.replace(/\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![a-zA-Z])\s*/g, "");
  t = t.replace(/\\\(|\\\)/g, " ").replace(/\\\[|\\\]/g, " ");
  // colour is presentation: \color{red}{3}, {\color{red} 3}, \textcolor{red}{3}, \colorbox{yellow}{3}
  t = t.replace(/\\(?:color|textcolor|colorbox)\s*(?:\[[^\]]*\])?\s*\{[^{}]*\}/g, "");
  t = t.replace(/\u230a/g, "\\lfloor ").replace(/\u230b/g, "\\rfloor ").replace(/\u2308/g, "\\lceil ").replace(/\u2309/g, "\\rceil ");
  t = t.replace(/\\(?:lbrace|\{)/g, "\\{").replace(/\\rbrace/g, "\\}");
  t = t.replace(/\\lbrack(?![a-zA-Z])/g, "[").replace(/\\rbrack(?![a-zA-Z])/g, "]");
  // font switches and invisible boxes
  t = t.replace(/\\(?:bf|it|rm|sf|tt|em|large|Large|LARGE|small|footnotesize|scriptsize|tiny|huge|Huge|normalsize)(?![a-zA-Z])\s*/g, "");
  t = t.replace(/\\[hv]?phantom\s*\{[^{}]*\}/g, "");
  t = t.replace(/\\langle(?![a-zA-Z])/g, "(").replace(/\\rangle(?![a-zA-Z])/g, ")");
  t = t.replace(/\\(?:lvert|rvert|vert)(?![a-zA-Z])/g, "|").replace(/\\(?:lVert|rVert|Vert)(?![a-zA-Z])/g, "|");
  // spacing and style
  t = t.replace(/\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits)(?![a-zA-Z])/g, " ");
  t = t.replace(/\\(?:quad|qquad|enspace|thinspace|medspace|thickspace|negthinspace)(?![a-zA-Z])/g, " ");
  t = t.replace(/\\[!,;:>]/g, "").replace(/\\ /g, " ").replace(/~/g, " ");
  t = t.replace(/\{,\}/g, ",");
  t = t.replace(/\\(?:dfrac|tfrac|cfrac)(?![a-zA-Z])/g, "\\frac").replace(/\\(?:dbinom|tbinom)(?![a-zA-Z])/g, "\\binom");
  // LaTeX single-token arguments: \frac12, \frac1{x}, \frac{a}2, \sqrt2
  t = t
    .replace(/\\frac\s*([0-9a-zA-Z])\s*([0-9a-zA-Z])/g, "\\frac{$1}{$2}")
    .replace(/\\frac\s*([0-9a-zA-Z])\s*\{/g, "\\frac{$1}{")
    .replace(/\\frac\s*\{([^{}]*)\}\s*([0-9a-zA-Z])/g, "\\frac{$1}{$2}")
    .replace(/\\sqrt\s*([0-9a-zA-Z])/g, "\\sqrt{$1}");
  // repeating decimals: 0.\overline{3} = 1/3, 1.2\overline{34} = 1222/990
  t = t.replace(/(?<!\d)(\d*)\.(\d*)\\overline\{(\d{1,12})\}/g, (_m, int: string, non: string, rep: string) => {
    const a = BigInt((int || "0") + non + rep);
    const b = BigInt((int || "0") + non);
    const den = 10n ** BigInt(non.length) * (10n ** BigInt(rep.length) - 1n);
    return `\\frac{${a - b}}{${den}}`;
  });
  // degrees
  t = t.replace(/(?:\^\s*\{\s*\\circ\s*\}|\^\s*\\circ)\s*(?:\\(?:text|mathrm)\s*\{\s*[CF]\s*\}|[CF](?![a-zA-Z]))?/g, " ").replace(/\\(?:circ|degree)(?![a-zA-Z])/g, " ");
  t = t.replace(/\\%/g, "%");
  t = t.replace(/\\mathbb\s*\{?\s*R\s*\}?|\u211d/g, "(-\\infty, \\infty)");
  t = unwrapCommands(t, TEXT_COMMANDS);
  // relations spelled as commands
  t = t
    .replace(/\\lt(?![a-zA-Z])/g, "<")
    .replace(/\\gt(?![a-zA-Z])/g, ">")
    .replace(/\\(?:leq|le|leqslant)(?![a-zA-Z])/g, "<=")
    .replace(/\\(?:geq|ge|geqslant)(?![a-zA-Z])/g, ">=")
    .replace(/\\(?:neq|ne)(?![a-zA-Z])/g, "!=")
    .replace(/\\(?:varnothing|emptyset)(?![a-zA-Z])/g, "\\emptyset")
    .replace(/\\(?:infty|infinity)(?![a-zA-Z])/g, "\\infty ")
    .replace(/\\(?:dots|ldots|cdots)(?![a-zA-Z])/g, "...");
  t = t.replace(/\s+/g, " ").trim();
  // "= 1/3 \approx 0.33": the approximation is commentary
  // (but a lone "x \approx 11" is the claim x = 11)
  t = /=.*\\approx/.test(t) ? t.replace(/(\S)\s*\\approx.*$/, "$1").trim() : t.replace(/\\approx/g, "=");
  t = t.replace(/^=\s*/, ""); // "\approx 3.14" on its own
  // prefixes "x \in", "answer:"
  t = t.replace(/^[a-zA-Z]\s*\\in\s+/, "").replace(/^[a-zA-Z]\s*\\in(?=[[(\\{])/, "");
  // trailing punctuation (an ellipsis "..." is content: "1, 2, 3, ..." is not the list 1, 2, 3)
  if (!/\.\.\.$/.test(t)) t = trimEndChars(t, ".;,").trim();
  t = t.replace(/^\{([^{}]*)\}$/, "$1").trim();
  // "the answer is 5" inside the answer itself
  t = t.replace(/^(?:the\s+)?(?:final\s+)?answer\s*(?:is\b|:)\s*:?\s*/i, "");
  // a number spelled out as the whole answer
  const word = NUMBER_WORDS[t.toLowerCase()];
  if (word !== undefined) t = word;
  // an ordinal as the whole answer: 7th, 7^{th}, 21st
  t = t.replace(/^(\d+)\s*(?:\^\s*\{?\s*)?(?:st|nd|rd|th)\s*\}?$/, "$1");
  // a multiple-choice label before the value: "(C) 12" → "12"
  t = t.replace(/^\(([A-E])\)\s+(?=\S)/, "");
  t = t.replace(/\s*%\s*$/, "%").replace(/\s*(?:percent|pct)$/i, "%");
  if (stripUnits) t = removeUnits(t);
  t = collapseThousands(t);
  return t.replace(/\u0001/g, "\\\\");
}

/** Remove trailing characters from `chars` (a loop, not a regex: `/[.;]+$/` is quadratic on long runs). */
function trimEndChars(s: string, chars: string): string {
  let end = s.length;
  while (end > 0 && chars.includes(s[end - 1]!)) end--;
  return s.slice(0, end);
}

function removeUnits(s: string): string {
  // a number followed only by words: "5 apples", "3/4 of the class", "3 hundred"; anything else stays as written
  const lead = /^(-?(?:\d[\d.,/]*|\\frac\{\d+\}\{\d+\})%?)\s+([a-zA-Z]{2,}[a-zA-Z\s.'/-]*)$/.exec(s);
  if (lead) return numberWithWords(lead[1]!, lead[2]!, "strict") ?? s;
  let t = s;
  for (let guard = 0; guard < 6; guard++) {
    // unit with optional power: " cm^2", " cm^{2}", "cm²"
    const m = /(\s*)(?<![a-zA-Z/.])([a-zA-Z][a-zA-Z/.]*)\s*(?:\^\s*\{?\s*[23]\s*\}?|[\u00b2\u00b3])?\s*$/.exec(t);
    if (!m) break;
    const word = m[2]!.toLowerCase().replace(/\.$/, "");
    const before = t.slice(0, m.index);
    if (!/[\d}%)a-zA-Z]\s*$/.test(before) || before.trim().length === 0) break;
    // a bare letter glued to a number is algebra ("5x"), not a unit: need a space or a known multi-letter unit
    const spaced = m[1]!.length > 0;
    if (!UNIT_WORDS.has(word)) break;
    else if (word.length < 2 && !(spaced && /^-?[\d.,/ ]+$/.test(before.trim()))) break; // "5 m" yes, "\pi r^2 h" no
    else if (!spaced && /[a-zA-Z]$/.test(before)) break;
    t = before.trim();
  }
  return t;
}

/** Words that multiply or raise the number before them: `3 hundred` is 300, `5 squared` is 25. */
const MAGNITUDES: Record<string, string> = {
  dozen: "12", score: "20", hundred: "100", thousand: "1000", million: "10^{6}", billion: "10^{9}", trillion: "10^{12}",
  squared: "^{2}", cubed: "^{3}",
  half: "/2", halve: "/2", third: "/3", quarter: "/4", fourth: "/4", fifth: "/5", sixth: "/6", seventh: "/7", eighth: "/8",
  ninth: "/9", tenth: "/10", hundredth: "/100", thousandth: "/1000",
};
/** Words that change what the number before them claims (negations, comparisons, alternatives, operations). */
const QUALIFIERS = new Set(
  ("not no never nor or but below above under over beneath less more fewer greater smaller larger least most " +
    "plus minus divided multiplied add added subtract subtracted off short away ish approximately roughly " +
    "about around almost nearly maybe perhaps probably possibly if unless except than to till until from between " +
    "negative positive is isn't are was were be wrong incorrect false").split(" "),
);
/** Words that end the value's phrase and start a clause or an aside ("5 because …", "5 since …", "5 in total"). */
const CLAUSE_WORDS = new Set(
  ("because since as which so when where given hence thus therefore that this we it i and with using by for in " +
    "after then here there meaning").split(" "),
);
/** Words that may stand between a number and its unit or count noun ("5 of the students", "3 per day"). */
const FILLER_WORDS = new Set("of the a an per each all their his her its my our your total whole".split(" "));
/** Adjectives that may qualify a count noun ("3 distinct real roots"), never a value on their own. */
const COUNT_ADJECTIVES = new Set(
  ("distinct real different possible unique integer integral whole complex prime odd even other additional " +
    "full new more extra square cubic solid red blue green white black small large big").split(" "),
);

/** A noun that counts things: a known unit, or a plural-looking word (`apples`, `ways`) that no rule reads otherwise. */
function isCountNoun(w: string): boolean {
  if (UNIT_WORDS.has(w)) return true;
  return w.length >= 4 && /s$/.test(w) && !QUALIFIERS.has(w) && !/^(?:hundreds|thousands|millions|billions|trillions|dozens|tens|less|unless|plus|minus|thus|various|does|always|perhaps|sometimes|besides|towards|afterwards|whereas|nevertheless|regardless|across|yes|this|its|has|was|is)$/.test(w);
}

/**
 * Read a number followed by words, as written.
 * - units and count nouns go (`5 apples`, `3 cm`, `3/4 of the class`, `2 distinct real roots`);
 * - magnitudes are applied (`3 hundred` → `(3)\cdot 100`, `2 dozen` → 24, `5 squared` → `(5)^{2}`, `1.5 million`);
 * - a clause after the value ends it (`5 because …`, `5 since …`);
 * - anything else — negations, comparisons, alternatives (`5 below zero`, `5 or more`, `12 or thirteen`,
 *   `5 is not the answer`) or unknown words — is not a plain number: `strict` returns null (the answer stays as
 *   written and does not equal the bare number); `lenient` (prose around a last-number fallback) returns null only
 *   for qualifiers and magnitudes it cannot apply, and the number for unknown words.
 * @returns the value to grade, or null.
 */
export function numberWithWords(num: string, words: string, mode: "strict" | "lenient"): string | null {
  const ws = words.toLowerCase().split(/[\s.]+/).filter((w) => w.length > 0);
  let value = num;
  let i = 0;
  // magnitudes first: "3 hundred", "1.5 million", "2 dozen", "5 squared", "3 hundred thousand"
  while (i < ws.length && MAGNITUDES[ws[i]!.replace(/s$/, "")] !== undefined && !/^(?:tens|hundreds|thousands|millions|billions|dozens)$/.test(ws[i]!)) {
    const m = MAGNITUDES[ws[i]!.replace(/s$/, "")]!;
    value = m.startsWith("^") || m.startsWith("/") ? `(${value})${m}` : `(${value})\\cdot ${m}`;
    i++;
  }
  const rest = i;
  let sawNoun = false;
  let sawOf = false;
  for (; i < ws.length; i++) {
    const w = ws[i]!;
    if (CLAUSE_WORDS.has(w) && (i > 0 || mode === "lenient" || w !== "and")) break;
    // after the count noun a phrase of its own follows ("12 ways to choose k"), unless it qualifies the count
    if (sawNoun && !FILLER_WORDS.has(w) && !/^(?:or|nor|not|no|more|less|fewer|least|most|plus|minus|short|off)$/.test(w)) break;
    if (QUALIFIERS.has(w) || MAGNITUDES[w.replace(/s$/, "")] !== undefined || NUMBER_WORDS[w] !== undefined) return null;
    if (w === "of") sawOf = true;
    if (FILLER_WORDS.has(w) || COUNT_ADJECTIVES.has(w)) continue;
    // a count noun; after 1 a singular one ("1 way", "1 child")
    if (isCountNoun(w) || sawOf || (/^-?1$/.test(num) && i === rest && w.length >= 3 && !CLAUSE_WORDS.has(w))) {
      sawNoun = true;
      continue;
    }
    if (mode === "strict") return null;
  }
  if (mode === "strict" && !sawNoun && i === ws.length && ws.length > rest) return null;
  return value;
}

/** `1,000,000` and `1 000 000` → `1000000` when the whole answer is one such number (so `(100,200)` stays a pair). */
function collapseThousands(s: string): string {
  const m = /^(-?)([1-9]\d{0,2}(?:,\d{3})+|[1-9]\d{0,2}(?: \d{3})+)(\.\d+)?(%?)$/.exec(s);
  if (!m) return s;
  return m[1]! + m[2]!.replace(/[, ]/g, "") + (m[3] ?? "") + m[4]!;
}
