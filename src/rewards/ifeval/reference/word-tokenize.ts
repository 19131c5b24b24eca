/**
 * Penn-Treebank-style word tokenization as NLTK's `word_tokenize` does it (NLTK ≥ 3.9 rules):
 * split into sentences with Punkt, then per sentence pad quotes, punctuation, brackets and
 * dashes with spaces, split clitics off (`DON'T` → `DO` `N'T`, `NASA's` → `NASA` `'s`,
 * `cannot` → `can` `not`) and split on whitespace. Only the sentence-final period is split off;
 * `U.S.` and `well-known` stay one token. The reference IFEval counts all-capital words over
 * these tokens. Our own implementation of the published Treebank conventions.
 */
import { sentTokenize } from "./punkt.ts";
import { PY_B, PY_W, PY_WS, pySplit } from "./pytext.ts";

const W = `[${PY_W}]`;
const S = `[${PY_WS}]`;
type Rule = [RegExp, string];

const STARTING_QUOTES: Rule[] = [
  [/([«“‘„]|`+)/gu, " $1 "],
  [/^"/u, "``"],
  [/(``)/gu, " $1 "],
  [/([ ([{<])("|'{2})/gu, "$1 `` "],
  [new RegExp(`(?<!${W})(')(?!(?:re|ve|ll|m|t|s|d|n)${PY_B})(?=${W})`, "giu"), "$1 "],
];

const PUNCTUATION: Rule[] = [
  [new RegExp(`([^.])(\\.)([\\])}>"'»”’ ]*)${S}*$`, "u"), "$1 $2 $3 "],
  [/([:,])(\P{Nd})/gu, " $1 $2"],
  [/([:,])$/u, " $1 "],
  [/\.{2,}/gu, " $& "],
  [/[;@#$%&]/gu, " $& "],
  [/[\u2012-\u2015]/gu, " $& "],
  [new RegExp(`([^.])(\\.)([\\])}>"']*)${S}*$`, "u"), "$1 $2$3 "],
  [/[?!]/gu, " $& "],
  [/([^'])' /gu, "$1 ' "],
  [/\*/gu, " $& "],
];

const PARENS: Rule = [/[\][(){}<>]/gu, " $& "];
const DOUBLE_DASHES: Rule = [/--/gu, " -- "];

const ENDING_QUOTES: Rule[] = [
  [/([»”’])/gu, " $1 "],
  [/''/gu, " '' "],
  [/"/gu, " '' "],
  [new RegExp(`${S}+`, "gu"), " "],
  [/([^' ])('[sS]|'[mM]|'[dD]|') /gu, "$1 $2 "],
  [/([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) /gu, "$1 $2 "],
];

const CONTRACTIONS: Rule[] = [
  ...[
    "(can)(not)",
    "(d)('ye)",
    "(gim)(me)",
    "(gon)(na)",
    "(got)(ta)",
    "(lem)(me)",
    "(more)('n)",
  ].map((p): Rule => [new RegExp(`${PY_B}${p}${PY_B}`, "giu"), " $1 $2 "]),
  [new RegExp(`${PY_B}(wan)(na)(?=${S})`, "giu"), " $1 $2 "],
  [new RegExp(` ('t)(is)${PY_B}`, "giu"), " $1 $2 "],
  [new RegExp(` ('t)(was)${PY_B}`, "giu"), " $1 $2 "],
];

/**
 * Python's `re.sub` on a pattern without the g flag replaces every match too; only the anchored
 * (`$`) rules are single-match by construction.
 */
function sub(text: string, [re, rep]: Rule): string {
  return text.replace(re, rep);
}

/** Treebank tokens of one sentence (NLTK's `NLTKWordTokenizer.tokenize`). */
export function treebankTokenize(sentence: string): string[] {
  let t = sentence;
  for (const r of STARTING_QUOTES) t = sub(t, r);
  for (const r of PUNCTUATION) t = sub(t, r);
  t = sub(t, PARENS);
  t = sub(t, DOUBLE_DASHES);
  t = ` ${t} `;
  for (const r of ENDING_QUOTES) t = sub(t, r);
  for (const r of CONTRACTIONS) t = sub(t, r);
  return pySplit(t);
}

/** NLTK `word_tokenize(text)`: Punkt sentences, then Treebank tokens of each. */
export function wordTokenize(text: string): string[] {
  return sentTokenize(text).flatMap(treebankTokenize);
}
