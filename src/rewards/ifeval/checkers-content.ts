/**
 * Content constraints: keywords, frequencies, case, punctuation, script, start/end phrases.
 */
import { compare, num, registerConstraint, relation, str, strList } from "./registry.ts";
import { words } from "./text-stats.ts";
import { detectLanguage, sameLanguage } from "./reference/language.ts";

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** Whole-word, case-insensitive occurrences of a keyword (phrases allowed; outer spaces ignored). */
function occurrences(text: string, keyword: string): number {
  const k = keyword.trim();
  if (!k) return 0;
  const re = new RegExp(`(?<![\\p{L}\\p{N}])${escape(k)}(?![\\p{L}\\p{N}])`, "giu");
  return text.match(re)?.length ?? 0;
}

registerConstraint({
  name: "keywords_include",
  description: "every word/phrase in `keywords` appears (case-insensitive, whole word)",
  aliases: ["keywords:existence"],
  check(r, p) {
    const missing = strList(p, "keywords").filter((k) => occurrences(r, k) === 0);
    return { ok: missing.length === 0, reason: missing.length ? `missing: ${missing.join(", ")}` : "all keywords present" };
  },
});

registerConstraint({
  name: "keywords_forbidden",
  description: "no word/phrase in `forbidden_words` appears (case-insensitive, whole word)",
  aliases: ["keywords:forbidden_words"],
  check(r, p) {
    const found = strList(p, "forbidden_words").filter((k) => occurrences(r, k) > 0);
    return { ok: found.length === 0, reason: found.length ? `forbidden words used: ${found.join(", ")}` : "no forbidden words" };
  },
});

registerConstraint({
  name: "keyword_frequency",
  description: "`keyword` occurs a number of times standing in `relation` to `frequency`",
  aliases: ["keywords:frequency"],
  check(r, p) {
    const k = str(p, "keyword");
    const n = occurrences(r, k);
    const rel = relation(p.relation);
    const target = num(p, "frequency");
    return { ok: compare(n, rel, target), reason: `"${k}" occurs ${n} times; required ${rel} ${target}` };
  },
});

registerConstraint({
  name: "letter_frequency",
  description: "`letter` occurs (case-insensitive) a number of times standing in `let_relation` to `let_frequency`",
  aliases: ["keywords:letter_frequency"],
  check(r, p) {
    const letter = str(p, "letter").toLowerCase();
    if ([...letter].length !== 1) throw new Error(`letter: expected one character, got ${JSON.stringify(p.letter)}`);
    const n = [...r.toLowerCase()].filter((c) => c === letter).length;
    const rel = relation(p.let_relation ?? p.relation);
    const target = num(p, "let_frequency");
    return { ok: compare(n, rel, target), reason: `"${letter}" occurs ${n} times; required ${rel} ${target}` };
  },
});

registerConstraint({
  name: "lowercase",
  description: "no upper-case letters anywhere",
  aliases: ["change_case:english_lowercase"],
  check(r) {
    const ok = r === r.toLowerCase() && /\p{L}/u.test(r);
    return { ok, reason: ok ? "all lower case" : "contains upper-case letters (or no letters)" };
  },
});

registerConstraint({
  name: "uppercase",
  description: "no lower-case letters anywhere",
  aliases: ["change_case:english_capital"],
  check(r) {
    const ok = r === r.toUpperCase() && /\p{L}/u.test(r);
    return { ok, reason: ok ? "all upper case" : "contains lower-case letters (or no letters)" };
  },
});

registerConstraint({
  name: "capital_word_frequency",
  description: "number of all-capital words (≥2 letters) stands in `capital_relation` to `capital_frequency`",
  aliases: ["change_case:capital_word_frequency"],
  check(r, p) {
    const n = words(r).filter((w) => /\p{Lu}/u.test(w) && w === w.toUpperCase() && [...w].filter((c) => /\p{L}/u.test(c)).length >= 2).length;
    const rel = relation(p.capital_relation ?? p.relation);
    const target = num(p, "capital_frequency");
    return { ok: compare(n, rel, target), reason: `${n} all-capital words; required ${rel} ${target}` };
  },
});

registerConstraint({
  name: "no_commas",
  description: "no commas (ASCII or full-width)",
  aliases: ["punctuation:no_comma"],
  check(r) {
    const n = (r.match(/[,，、]/g) ?? []).length;
    return { ok: n === 0, reason: n ? `${n} commas` : "no commas" };
  },
});

registerConstraint({
  name: "ends_with",
  description: "ends with `end_phrase` (ignoring trailing whitespace; case-insensitive)",
  aliases: ["startend:end_checker"],
  check(r, p) {
    const e = str(p, "end_phrase").trim().toLowerCase();
    const ok = r.trim().toLowerCase().endsWith(e);
    return { ok, reason: ok ? "ends with the phrase" : `does not end with "${e}"` };
  },
});

registerConstraint({
  name: "starts_with",
  description: "starts with `start_phrase` (ignoring leading whitespace; case-insensitive)",
  aliases: ["combination:repeat_prompt"],
  check(r, p) {
    const s = String(p.start_phrase ?? p.prompt_to_repeat ?? "").trim().toLowerCase();
    if (!s) throw new Error("start_phrase: expected a non-empty string");
    const ok = r.trim().toLowerCase().startsWith(s);
    return { ok, reason: ok ? "starts with the phrase" : `does not start with "${s.slice(0, 40)}"` };
  },
});

registerConstraint({
  name: "quotation",
  description: 'the whole response is wrapped in double quotes ("…" or “…”)',
  aliases: ["startend:quotation"],
  check(r) {
    const t = r.trim();
    const ok = t.length >= 2 && ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("“") && t.endsWith("”")));
    return { ok, reason: ok ? "wrapped in double quotes" : "not wrapped in double quotes" };
  },
});

/** Unicode scripts by name, and the script of common ISO 639-1 language codes. */
const SCRIPTS: Record<string, RegExp> = {
  latin: /\p{Script=Latin}/u,
  cyrillic: /\p{Script=Cyrillic}/u,
  greek: /\p{Script=Greek}/u,
  arabic: /\p{Script=Arabic}/u,
  hebrew: /\p{Script=Hebrew}/u,
  devanagari: /\p{Script=Devanagari}/u,
  bengali: /\p{Script=Bengali}/u,
  thai: /\p{Script=Thai}/u,
  hangul: /\p{Script=Hangul}/u,
  han: /\p{Script=Han}/u,
  tamil: /\p{Script=Tamil}/u,
  telugu: /\p{Script=Telugu}/u,
  kannada: /\p{Script=Kannada}/u,
  gujarati: /\p{Script=Gujarati}/u,
  gurmukhi: /\p{Script=Gurmukhi}/u,
  malayalam: /\p{Script=Malayalam}/u,
  japanese: /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u,
  cjk: /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u,
};
const LANGUAGE_SCRIPT: Record<string, string> = {
  en: "latin", fr: "latin", de: "latin", es: "latin", it: "latin", pt: "latin", nl: "latin", sv: "latin", fi: "latin",
  pl: "latin", tr: "latin", vi: "latin", id: "latin", sw: "latin", da: "latin", no: "latin", cs: "latin", ro: "latin",
  ru: "cyrillic", uk: "cyrillic", bg: "cyrillic", sr: "cyrillic", mk: "cyrillic", kk: "cyrillic",
  el: "greek", ar: "arabic", fa: "arabic", ur: "arabic", he: "hebrew", hi: "devanagari", mr: "devanagari", ne: "devanagari",
  bn: "bengali", th: "thai", ko: "hangul", zh: "han", ja: "japanese",
  ta: "tamil", te: "telugu", kn: "kannada", gu: "gujarati", pa: "gurmukhi", ml: "malayalam",
};

registerConstraint({
  name: "language_script",
  description:
    "the response is in `language` (ISO 639-1; identified from the text, see docs/rewards-ifeval.md), or at least `min_fraction` (default 0.9) of its letters are in `script` (latin, cyrillic, greek, arabic, hebrew, devanagari, bengali, thai, hangul, han, japanese, cjk, tamil, telugu, kannada, gujarati, gurmukhi, malayalam)",
  aliases: ["language:response_language"],
  check(r, p) {
    if (p.script === undefined && p.language !== undefined) {
      const want = str(p, "language");
      const got = detectLanguage(r);
      if (got === null) return { ok: false, reason: "no letters to identify a language" };
      return { ok: sameLanguage(want, got), reason: `detected language ${got}; required ${want}` };
    }
    const scriptName = String(p.script ?? "").toLowerCase();
    if (!SCRIPTS[scriptName]) throw new Error(`script: unknown ${JSON.stringify(p.script)} (scripts: ${Object.keys(SCRIPTS).join(", ")}); or give language: an ISO 639-1 code`);
    const re = SCRIPTS[scriptName]!;
    const letters = [...r].filter((c) => /\p{L}/u.test(c));
    if (letters.length === 0) return { ok: false, reason: "no letters" };
    const frac = letters.filter((c) => re.test(c)).length / letters.length;
    const min = p.min_fraction === undefined ? 0.9 : num(p, "min_fraction");
    return { ok: frac >= min, reason: `${(frac * 100).toFixed(1)}% of letters in ${scriptName}; required ≥ ${(min * 100).toFixed(0)}%` };
  },
});

registerConstraint({
  name: "regex",
  description: "the response matches `pattern` (JavaScript RegExp source, optional `flags`); `count` + `relation` to count matches",
  check(r, p) {
    const re = new RegExp(str(p, "pattern"), String(p.flags ?? "").replace("g", "") + "g");
    const n = r.match(re)?.length ?? 0;
    if (p.count === undefined) return { ok: n > 0, reason: n > 0 ? "pattern matches" : "pattern does not match" };
    const rel = relation(p.relation);
    const target = num(p, "count");
    return { ok: compare(n, rel, target), reason: `${n} matches; required ${rel} ${target}` };
  },
});
