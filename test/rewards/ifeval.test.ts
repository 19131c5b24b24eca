import { test } from "node:test";
import assert from "node:assert/strict";
import { verifyConstraints, fromIFEval, listConstraints, registerConstraint } from "../../src/rewards/ifeval/index.ts";
import { sentences, words, paragraphs } from "../../src/rewards/ifeval/text-stats.ts";

// These cases pin the "strict-words" conventions; the IFEval-exact default is covered by
// ifeval-reference.test.ts, the empty-response exploits by ifeval-exploits.test.ts.
const ok = (response: string, c: Record<string, unknown> & { type: string }) => verifyConstraints(response, [c], { mode: "strict-words" }).results[0]!;

test("at least 15 checkers are registered", () => {
  assert.ok(listConstraints().length >= 15, `${listConstraints().length}`);
});

test("text statistics", () => {
  assert.deepEqual(words("Don't stop — well-known 42 things."), ["Don't", "stop", "well-known", "42", "things"]);
  assert.equal(sentences("Dr. Smith arrived. He said hi! Did you see? Yes").length, 4);
  assert.equal(sentences("It costs 3.5 dollars. OK.").length, 2);
  assert.equal(paragraphs("a\n\nb\n \n c").length, 3);
  assert.equal(paragraphs("a\n***\nb", true).length, 2);
});

test("length constraints with relations", () => {
  assert.equal(ok("one two three", { type: "word_count", relation: "at least", num_words: 3 }).ok, true);
  assert.equal(ok("one two three", { type: "word_count", relation: "less than", num_words: 3 }).ok, false);
  assert.equal(ok("one two three", { type: "length_constraints:number_words", relation: "at most", num_words: 3 }).ok, true);
  assert.equal(ok("A. B c. D e.", { type: "sentence_count", relation: "exactly", num_sentences: 2 }).ok, false);
  assert.equal(ok("First one. Second one.", { type: "sentence_count", relation: "==", num_sentences: 2 }).ok, true);
  assert.equal(ok("p1\n\np2", { type: "paragraph_count", num_paragraphs: 2 }).ok, true);
  assert.equal(ok("p1\n***\np2\n***\np3", { type: "paragraph_count", num_paragraphs: 3 }).ok, true);
  assert.equal(ok("héllo", { type: "char_count", relation: "exactly", num_chars: 5 }).ok, true);
  assert.equal(ok("Intro here\n\nSummer is hot", { type: "first_word_of_paragraph", num_paragraphs: 2, nth_paragraph: 2, first_word: "summer" }).ok, true);
});

test("keyword constraints", () => {
  assert.equal(ok("I love Rust and TypeScript", { type: "keywords_include", keywords: ["rust", "typescript"] }).ok, true);
  assert.equal(ok("I love Rusty things", { type: "keywords_include", keywords: ["rust"] }).ok, false);
  assert.equal(ok("no bad words", { type: "keywords_forbidden", forbidden_words: ["evil"] }).ok, true);
  assert.equal(ok("an Evil plan", { type: "keywords:forbidden_words", forbidden_words: ["evil"] }).ok, false);
  assert.equal(ok("cat dog cat CAT", { type: "keyword_frequency", keyword: "cat", frequency: 3, relation: "at least" }).ok, true);
  assert.equal(ok("cat dog cat CAT", { type: "keyword_frequency", keyword: "cat", frequency: 3, relation: "less than" }).ok, false);
  assert.equal(ok("banana", { type: "letter_frequency", letter: "a", let_frequency: 3, let_relation: "at least" }).ok, true);
  assert.equal(ok("banana", { type: "letter_frequency", letter: "A", let_frequency: 3, let_relation: "less than" }).ok, false);
});

test("case, punctuation, quotes, start/end", () => {
  assert.equal(ok("all lower here", { type: "lowercase" }).ok, true);
  assert.equal(ok("Not all lower", { type: "change_case:english_lowercase" }).ok, false);
  assert.equal(ok("ALL UPPER 123", { type: "uppercase" }).ok, true);
  assert.equal(ok("ALL Upper", { type: "uppercase" }).ok, false);
  assert.equal(ok("The NASA and FBI and I", { type: "capital_word_frequency", capital_frequency: 2, capital_relation: "exactly" }).ok, true);
  assert.equal(ok("no commas here", { type: "no_commas" }).ok, true);
  assert.equal(ok("one, two", { type: "no_commas" }).ok, false);
  assert.equal(ok("…and that is all. Is there anything else I can help with?", { type: "ends_with", end_phrase: "Is there anything else I can help with?" }).ok, true);
  assert.equal(ok("  Hello world", { type: "starts_with", start_phrase: "hello" }).ok, true);
  assert.equal(ok('"quoted whole"', { type: "quotation" }).ok, true);
  assert.equal(ok('"half quoted', { type: "quotation" }).ok, false);
});

test("layout constraints", () => {
  assert.equal(ok('```json\n{"a": 1}\n```', { type: "json_format" }).ok, true);
  assert.equal(ok("{a: 1}", { type: "json_format" }).ok, false);
  assert.equal(ok("* one\n* two\n- three", { type: "bullet_count", num_bullets: 3 }).ok, true);
  assert.equal(ok("* one\n* two", { type: "bullet_count", num_bullets: 3 }).ok, false);
  assert.equal(ok("<<My Title>>\ntext", { type: "title" }).ok, true);
  assert.equal(ok("<<>>", { type: "title" }).ok, false);
  assert.equal(ok("Dear [name], at [address]", { type: "placeholders", num_placeholders: 2 }).ok, true);
  assert.equal(ok("SECTION 1\na\nSECTION 2\nb", { type: "sections", section_spliter: "SECTION", num_sections: 2 }).ok, true);
  assert.equal(ok("*one* and **two** and *three*", { type: "highlighted_sections", num_highlights: 3 }).ok, true);
  assert.equal(ok("text\nP.S. remember", { type: "postscript" }).ok, true);
  assert.equal(ok("text\nP.P.S remember", { type: "postscript", postscript_marker: "P.P.S" }).ok, true);
  assert.equal(ok("text", { type: "postscript" }).ok, false);
  assert.equal(ok("one\n******\ntwo", { type: "two_responses" }).ok, true);
  assert.equal(ok("My answer is yes.", { type: "constrained_response" }).ok, true);
  assert.equal(ok("abc123", { type: "regex", pattern: "\\d+", count: 1, relation: "exactly" }).ok, true);
});

test("language script detection", () => {
  assert.equal(ok("Привет, как дела?", { type: "language_script", script: "cyrillic" }).ok, true);
  assert.equal(ok("Привет, как дела?", { type: "language:response_language", language: "ru" }).ok, true);
  assert.equal(ok("Hello there", { type: "language_script", language: "ru" }).ok, false);
  assert.equal(ok("你好，世界", { type: "language_script", script: "han" }).ok, true);
  assert.equal(ok("こんにちは世界", { type: "language_script", language: "ja" }).ok, true);
  assert.equal(ok("안녕하세요", { type: "language_script", script: "cjk" }).ok, true);
  assert.equal(ok("Bonjour le monde", { type: "language_script", language: "fr" }).ok, true);
});

test("fraction satisfied, per-constraint results, bad constraints fail without throwing", () => {
  const v = verifyConstraints("hello there, this answer is written in lower case english", [
    { type: "lowercase" },
    { type: "word_count", relation: "at least", num_words: 50 },
    { type: "no_such_checker" },
    { type: "word_count", relation: "sideways", num_words: 5 },
    { type: "word_count" },
  ]);
  assert.equal(v.reward, 1 / 5);
  assert.equal(v.correct, false);
  assert.match(v.results[2]!.reason, /unknown constraint/);
  assert.match(v.results[3]!.reason, /relation/);
  assert.match(v.results[4]!.reason, /num_words/);
  assert.equal(verifyConstraints("x", [{ type: "lowercase" }, { type: "uppercase" }], { strict: true }).reward, 0);
  // An empty list would reward any response: a data error, not a 1 (issue 26).
  assert.throws(() => verifyConstraints("x", []), /non-empty list of constraints/);
});

test("IFEval rows convert to constraints; users can register checkers", () => {
  const cs = fromIFEval(["punctuation:no_comma", "length_constraints:number_words"], [{}, { relation: "less than", num_words: 10, unused: null }]);
  assert.deepEqual(cs[1], { relation: "less than", num_words: 10, type: "length_constraints:number_words" });
  assert.equal(verifyConstraints("short answer", cs).reward, 1);
  registerConstraint({ name: "test_even_words", description: "even word count", check: (r) => ({ ok: r.split(/\s+/).length % 2 === 0, reason: "" }) });
  assert.equal(verifyConstraints("a b", [{ type: "test_even_words" }]).correct, true);
});
