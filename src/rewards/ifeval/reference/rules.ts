/**
 * The IFEval-exact rules (`mode: "ifeval"`): each of the 25 instructions of IFEval (Zhou et al.
 * 2023, arXiv:2311.07911) checked the way the reference implementation (google-research
 * `instruction_following_eval`, strict accuracy) checks it, quirks included:
 * - words are `\w+` runs (Python/Unicode: combining marks split words); sentences are Punkt's;
 *   all-capital words are NLTK `word_tokenize` tokens that are `isupper()`;
 * - `keywords:existence` / `keywords:frequency` match the keyword as a case-insensitive
 *   substring (a regex, as the reference passes it to `re`): "rust" is found in "Rusty";
 *   `keywords:forbidden_words` matches whole words (`\b…\b`);
 * - highlights are `*…*` / `**…**` spans on one line with non-blank content; sections are
 *   "<splitter> <number>" anywhere (case-sensitive); paragraphs split on `***` anywhere;
 *   JSON may sit in a ``` / ```json / ```Json / ```JSON fence;
 * - language rules use language identification (see language.ts); text with no letters to
 *   identify counts as followed, as in the reference.
 * Relations: the reference knows "less than" and "at least"; the others we accept
 * ("at most", "more than", "exactly") use the same counts.
 * Each rule is attached to one of our checker names; IFEval instruction ids are its aliases.
 */
import { compare, num, registerReferenceRule, relation, str, strList, type ConstraintOutcome } from "../registry.ts";
import { countSentences } from "./punkt.ts";
import { wordTokenize } from "./word-tokenize.ts";
import { detectLanguage } from "./language.ts";
import {
  PY_WS,
  countMatches,
  pyIsLower,
  pyIsUpper,
  pyRegex,
  pySplit,
  pyStrip,
  pyStripChars,
  pyWords,
} from "./pytext.ts";

type Params = Record<string, unknown>;
const out = (ok: boolean, reason: string): ConstraintOutcome => ({ ok, reason });
const counted = (n: number, what: string, p: Params, relKey: string, targetKey: string): ConstraintOutcome => {
  const rel = relation(p[relKey] ?? (relKey !== "relation" ? p.relation : undefined), relKey);
  const target = num(p, targetKey);
  return out(compare(n, rel, target), `${n} ${what}; required ${rel} ${target}`);
};
const WS = `[${PY_WS}]`;

// length_constraints:number_words — `\w+` runs.
registerReferenceRule("word_count", (r, p) => counted(pyWords(r).length, "words (\\w+ runs)", p, "relation", "num_words"));

// length_constraints:number_sentences — Punkt with the English model.
registerReferenceRule("sentence_count", (r, p) => counted(countSentences(r), "sentences (Punkt)", p, "relation", "num_sentences"));

// length_constraints:number_paragraphs — split on `***` anywhere (one optional whitespace each
// side); blank first/last pieces are dropped, a blank piece in the middle fails.
const DIVIDER = new RegExp(`${WS}?\\*\\*\\*${WS}?`, "u");
registerReferenceRule("paragraph_count", (r, p) => {
  const parts = r.split(DIVIDER);
  let n = parts.length;
  for (let i = 0; i < parts.length; i++) {
    if (pyStrip(parts[i]!) !== "") continue;
    if (i === 0 || i === parts.length - 1) n--;
    else return out(false, `empty paragraph ${i + 1} between *** dividers`);
  }
  return counted(n, "paragraphs (*** separated)", { ...p, relation: p.relation ?? "exactly" }, "relation", "num_paragraphs");
});

// length_constraints:nth_paragraph_first_word — paragraphs split on "\n\n".
registerReferenceRule("first_word_of_paragraph", (r, p) => {
  const parts = r.split("\n\n");
  const count = parts.filter((x) => pyStrip(x) !== "").length;
  const want = num(p, "num_paragraphs");
  const nth = num(p, "nth_paragraph");
  const first = String(p.first_word ?? "").toLowerCase();
  if (nth > count) return out(false, `${count} paragraphs; paragraph ${nth} does not exist`);
  const para = pyStrip(parts[nth - 1] ?? "");
  if (!para) return out(false, `paragraph ${nth} is empty`);
  const word = pyStripChars(pyStripChars(pySplit(para)[0] ?? "", "'"), '"');
  let got = "";
  for (const ch of word) {
    if (".,?!'\"".includes(ch)) break;
    got += ch.toLowerCase();
  }
  const ok = count === want && got === first;
  return out(ok, `${count} paragraphs (required ${want}); paragraph ${nth} starts with "${got}" (required "${first}")`);
});

// detectable_content:number_placeholders — `[...]` on one line, empty allowed.
registerReferenceRule("placeholders", (r, p) => counted(countMatches(/\[[^\n]*?\]/g, r), "[placeholders]", p, "relation", "num_placeholders"));

// detectable_content:postscript — the marker anywhere (case-insensitive); P.S. and P.P.S allow
// one optional space after each period.
registerReferenceRule("postscript", (r, p) => {
  const marker = pyStrip(String(p.postscript_marker ?? "P.S."));
  const text = r.toLowerCase();
  const re =
    marker === "P.P.S"
      ? new RegExp(`p\\.${WS}?p\\.${WS}?s`, "u")
      : marker === "P.S."
        ? new RegExp(`p\\.${WS}?s\\.`, "u")
        : pyRegex(marker.toLowerCase(), "");
  const ok = re.test(text);
  return out(ok, ok ? `has a ${marker} postscript` : `no ${marker} postscript`);
});

// detectable_format:number_bullet_lists — lines starting with `*` (not `**`) or `-`, exactly.
const STAR_BULLET = new RegExp(`(?<![^\\n])${WS}*\\*[^*][^\\n]*`, "gu");
const DASH_BULLET = new RegExp(`(?<![^\\n])${WS}*-[^\\n]*`, "gu");
registerReferenceRule("bullet_count", (r, p) =>
  counted(countMatches(STAR_BULLET, r) + countMatches(DASH_BULLET, r), "bullet lines", { ...p, relation: p.relation ?? "exactly" }, "relation", "num_bullets"),
);

// detectable_format:constrained_response — one of the fixed answers appears.
registerReferenceRule("constrained_response", (r, p) => {
  const opts = Array.isArray(p.options) ? (p.options as unknown[]).map(String) : ["My answer is yes.", "My answer is no.", "My answer is maybe."];
  const t = pyStrip(r);
  const hit = opts.find((o) => t.includes(o));
  return out(hit !== undefined, hit ? `contains "${hit}"` : "none of the fixed answers");
});

// detectable_format:number_highlighted_sections — `*x*` and `**x**` spans on one line whose
// content is not blank (`** **` and `**` do not count).
registerReferenceRule("highlighted_sections", (r, p) => {
  let n = 0;
  for (const m of r.matchAll(/\*[^\n*]*\*/g)) if (pyStrip(pyStripChars(m[0], "*")) !== "") n++;
  for (const m of r.matchAll(/\*\*[^\n*]*\*\*/g)) if (pyStrip(m[0].slice(2, -2)) !== "") n++;
  return counted(n, "highlighted spans", p, "relation", "num_highlights");
});

// detectable_format:multiple_sections — "<splitter> <digits>" anywhere, case-sensitive.
registerReferenceRule("sections", (r, p) => {
  const splitter = pyStrip(String(p.section_spliter ?? p.section_splitter ?? "Section"));
  const re = pyRegex(`${WS}?(?:${splitter})${WS}?\\d+${WS}?`, "g");
  return counted(countMatches(re, r), `"${splitter} N" sections`, p, "relation", "num_sections");
});

// detectable_format:json_format — the whole response parses as JSON after removing a fence.
registerReferenceRule("json_format", (r) => {
  let t = pyStrip(r);
  for (const fence of ["```json", "```Json", "```JSON", "```"]) if (t.startsWith(fence)) t = t.slice(fence.length);
  if (t.endsWith("```")) t = t.slice(0, -3);
  t = pyStrip(t);
  try {
    JSON.parse(t);
    return out(true, "valid JSON");
  } catch (e) {
    // Python's json also reads the bare constants NaN, Infinity and -Infinity.
    const relaxed = t.replace(/"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g, (m) => (m.startsWith('"') ? m : "0"));
    if (relaxed !== t) {
      try {
        JSON.parse(relaxed);
        return out(true, "valid JSON (with NaN/Infinity)");
      } catch {
        // fall through
      }
    }
    return out(false, `not JSON: ${(e as Error).message.slice(0, 80)}`);
  }
});

// detectable_format:title — `<<…>>` on one line (greedy) with non-blank content.
registerReferenceRule("title", (r) => {
  for (const m of r.matchAll(/<<[^\n]+>>/g)) {
    if (pyStrip(m[0].replace(/^<+/, "").replace(/>+$/, "")) !== "") return out(true, "has a <<title>>");
  }
  return out(false, "no <<title>>");
});

// combination:two_responses — exactly two non-blank, different parts around "******"; blank
// parts are allowed only at the very start or end.
registerReferenceRule("two_responses", (r) => {
  const parts = r.split("******");
  const valid: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (pyStrip(parts[i]!) !== "") valid.push(parts[i]!);
    else if (i !== 0 && i !== parts.length - 1) return out(false, "an empty response between ****** separators");
  }
  const ok = valid.length === 2 && pyStrip(valid[0]!) !== pyStrip(valid[1]!);
  return out(ok, ok ? "two distinct responses" : `${valid.length} non-empty parts separated by ******${valid.length === 2 ? " (identical)" : ""}`);
});

// combination:repeat_prompt — starts with the prompt (case-insensitive, outer whitespace ignored).
registerReferenceRule("starts_with", (r, p) => {
  const s = pyStrip(String(p.prompt_to_repeat ?? p.start_phrase ?? "")).toLowerCase();
  if (!s) throw new Error("prompt_to_repeat: expected a non-empty string");
  const ok = pyStrip(r).toLowerCase().startsWith(s);
  return out(ok, ok ? "starts with the prompt" : `does not start with "${s.slice(0, 40)}"`);
});

// startend:end_checker — ends with the phrase after stripping whitespace, then double quotes.
registerReferenceRule("ends_with", (r, p) => {
  const e = pyStrip(str(p, "end_phrase")).toLowerCase();
  const ok = pyStripChars(pyStrip(r), '"').toLowerCase().endsWith(e);
  return out(ok, ok ? "ends with the phrase" : `does not end with "${e}"`);
});

// startend:quotation — first and last characters are ASCII double quotes.
registerReferenceRule("quotation", (r) => {
  const t = [...pyStrip(r)];
  const ok = t.length > 1 && t[0] === '"' && t[t.length - 1] === '"';
  return out(ok, ok ? "wrapped in double quotes" : 'not wrapped in ASCII double quotes (")');
});

// change_case:capital_word_frequency — NLTK word tokens that are all upper case.
registerReferenceRule("capital_word_frequency", (r, p) =>
  counted(wordTokenize(r).filter(pyIsUpper).length, "all-capital words", p, "capital_relation", "capital_frequency"),
);

/**
 * A language verdict as the reference gives it: the detected code must equal `want` exactly
 * (langdetect says "zh-cn", never "zh"); no letters to identify counts as followed.
 */
function languageIs(r: string, want: string): { ok: boolean; got: string } {
  const got = detectLanguage(r);
  return { ok: got === null || got === want, got: got ?? "undetermined" };
}

// change_case:english_capital / english_lowercase — case of every cased letter, and English.
registerReferenceRule("uppercase", (r) => {
  if (!pyIsUpper(r)) return out(false, "contains lower-case letters (or no letters)");
  const { ok, got } = languageIs(r, "en");
  return out(ok, ok ? "all upper case, English" : `all upper case but detected language ${got}, not en`);
});
registerReferenceRule("lowercase", (r) => {
  if (!pyIsLower(r)) return out(false, "contains upper-case letters (or no letters)");
  const { ok, got } = languageIs(r, "en");
  return out(ok, ok ? "all lower case, English" : `all lower case but detected language ${got}, not en`);
});

// language:response_language — the identified language equals `language`.
registerReferenceRule("language_script", (r, p, fallback) => {
  if (p.language === undefined) return fallback(r, p);
  const want = str(p, "language");
  const { ok, got } = languageIs(r, want);
  return out(ok, `detected language ${got}; required ${want}`);
});

// keywords:existence — each keyword as a case-insensitive regex/substring.
registerReferenceRule("keywords_include", (r, p) => {
  const missing = strList(p, "keywords").filter((k) => !pyRegex(k, "i").test(r));
  return out(missing.length === 0, missing.length ? `missing: ${missing.join(", ")}` : "all keywords present");
});

// keywords:forbidden_words — whole-word, case-insensitive.
registerReferenceRule("keywords_forbidden", (r, p) => {
  const found = [...new Set(strList(p, "forbidden_words"))].filter((w) => pyRegex(`\\b${w}\\b`, "i").test(r));
  return out(found.length === 0, found.length ? `forbidden words used: ${found.join(", ")}` : "no forbidden words");
});

// keywords:frequency — non-overlapping case-insensitive occurrences of the trimmed keyword.
registerReferenceRule("keyword_frequency", (r, p) => {
  const k = pyStrip(str(p, "keyword"));
  return counted(countMatches(pyRegex(k, "gi"), r), `occurrences of "${k}"`, p, "relation", "frequency");
});

// keywords:letter_frequency — occurrences of one letter in the lower-cased response.
registerReferenceRule("letter_frequency", (r, p) => {
  const raw = str(p, "letter");
  if ([...raw].length !== 1) throw new Error(`letter: expected one character, got ${JSON.stringify(p.letter)}`);
  const letter = pyStrip(raw).toLowerCase();
  let n = 0;
  for (const c of r.toLowerCase()) if (c === letter) n++;
  return counted(n, `"${letter}"`, p, "let_relation", "let_frequency");
});

// punctuation:no_comma — no ASCII comma.
registerReferenceRule("no_commas", (r) => {
  const n = r.split(",").length - 1;
  return out(n === 0, n ? `${n} commas` : "no commas");
});

