/**
 * Text primitives with Python 3 `str` / `re` semantics, so the IFEval-exact rules count what the
 * reference implementation (a Python program) counts:
 * - whitespace is what `str.isspace()` accepts (JavaScript's `\s` and `trim()` differ: they take
 *   U+FEFF and leave U+001C–U+001F and U+0085);
 * - a word character (`\w`) is a letter (L*), a number (N*) or `_` — combining marks (Mn/Mc, e.g.
 *   Devanagari vowel signs) are NOT word characters, as in Python;
 * - `\b` is the boundary between word and non-word characters in that sense;
 * - `isupper()` / `islower()` look at cased characters only.
 * All functions work on code points, never UTF-16 halves.
 */

/** Python's whitespace set (`str.isspace()`, `re` `\s` on str, `str.strip()` with no argument). */
export const PY_WS = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
/** Python's `\w` on str (stdlib `re`), as a regex class body (use with the `u` flag). */
export const PY_W = "\\p{L}\\p{N}_";
/**
 * `\w` of the third-party `regex` module, which NLTK ≥ 3.10.3 compiles its tokenizer patterns
 * with (Unicode TR#18 word characters): letters and other alphabetic characters, combining marks,
 * decimal digits, connector punctuation and the joiners — so "हिन्दी" is one word, "x²" is "x".
 */
export const NLTK_W = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";

const LEAD_WS = new RegExp(`^[${PY_WS}]+`, "u");
const TRAIL_WS = new RegExp(`[${PY_WS}]+$`, "u");
const WS_RUN = new RegExp(`[${PY_WS}]+`, "u");
const WORDS = new RegExp(`[${NLTK_W}]+`, "gu");

/** `s.strip()` */
export function pyStrip(s: string): string {
  return s.replace(LEAD_WS, "").replace(TRAIL_WS, "");
}

/** `s.rstrip()` */
export function pyRstrip(s: string): string {
  return s.replace(TRAIL_WS, "");
}

/** `s.strip(chars)` with an explicit character set (each char of `chars` is stripped). */
export function pyStripChars(s: string, chars: string): string {
  const set = new Set([...chars]);
  const cps = [...s];
  let a = 0;
  let b = cps.length;
  while (a < b && set.has(cps[a]!)) a++;
  while (b > a && set.has(cps[b - 1]!)) b--;
  return cps.slice(a, b).join("");
}

/** `s.split()` (no argument): runs of whitespace separate, no empty strings. */
export function pySplit(s: string): string[] {
  return pyStrip(s).split(WS_RUN).filter((x) => x !== "");
}

/**
 * The reference's words: NLTK `RegexpTokenizer(r"\w+")` tokens (NLTK ≥ 3.10.3 semantics, see
 * NLTK_W; older NLTK used stdlib `re`, where combining marks split words — only non-Latin
 * scripts count differently).
 */
export function pyWords(s: string): string[] {
  return s.match(WORDS) ?? [];
}

const UPPER = /[\p{Uppercase}]/u;
const LOWER = /[\p{Lowercase}]/u;
const TITLE = /\p{Lt}/u;

/** `s.isupper()`: no lower/title-case character and at least one upper-case one. */
export function pyIsUpper(s: string): boolean {
  let cased = false;
  for (const c of s) {
    if (LOWER.test(c) || TITLE.test(c)) return false;
    if (!cased && UPPER.test(c)) cased = true;
  }
  return cased;
}

/** `s.islower()`: no upper/title-case character and at least one lower-case one. */
export function pyIsLower(s: string): boolean {
  let cased = false;
  for (const c of s) {
    if (UPPER.test(c) || TITLE.test(c)) return false;
    if (!cased && LOWER.test(c)) cased = true;
  }
  return cased;
}

/** A regex source for Python's `\b` (Unicode word boundary). */
export const PY_B = `(?:(?<=[${PY_W}])(?![${PY_W}])|(?<![${PY_W}])(?=[${PY_W}]))`;

/**
 * Compile a pattern the reference passes straight to Python's `re` (keywords, section splitter,
 * postscript marker). Plain words and phrases — all IFEval data holds — behave identically;
 * `\b`, `\w`, `\s`, `\d` are given their Python (Unicode) meaning. A pattern JavaScript cannot
 * compile is matched literally (the reference would raise instead).
 */
export function pyRegex(source: string, flags: string): RegExp {
  const translated = source
    .replace(/\\\\|\\b|\\w|\\W|\\s|\\S|\\d|\\D/g, (m) => {
      switch (m) {
        case "\\b":
          return PY_B;
        case "\\w":
          return `[${PY_W}]`;
        case "\\W":
          return `[^${PY_W}]`;
        case "\\s":
          return `[${PY_WS}]`;
        case "\\S":
          return `[^${PY_WS}]`;
        case "\\d":
          return "\\p{Nd}";
        case "\\D":
          return "\\P{Nd}";
        default:
          return m;
      }
    });
  for (const [src, f] of [
    [translated, flags + "u"],
    [source, flags],
  ] as const) {
    try {
      return new RegExp(src, f);
    } catch {
      // try the next reading
    }
  }
  return new RegExp(source.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), flags + "u");
}

/** Number of non-overlapping matches of a global regex (`len(re.findall(...))`). */
export function countMatches(re: RegExp, s: string): number {
  if (!re.global) throw new Error("countMatches: the regex must have the g flag");
  let n = 0;
  re.lastIndex = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    n++;
    if (m[0] === "") re.lastIndex += 1;
  }
  return n;
}
