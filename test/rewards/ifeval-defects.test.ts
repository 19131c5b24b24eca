// One test per disagreement with the reference IFEval implementation listed in issue 15. Each
// pins the reference's answer in mode "ifeval"; where "strict-words" had the same bug, it is
// fixed there too (its own conventions otherwise stay: see docs/rewards-ifeval.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { verifyConstraints, fromIFEval, type IfevalMode } from "../../src/rewards/ifeval/index.ts";

function follows(id: string, kwargs: Record<string, unknown>, response: string, mode: IfevalMode = "ifeval"): boolean {
  return verifyConstraints(response, fromIFEval([id], [kwargs]), { mode }).results[0]!.ok;
}
const BOTH: IfevalMode[] = ["ifeval", "strict-words"];

test("the six missing response languages (ta, te, kn, gu, pa, ml) are identified", () => {
  const text: Record<string, string> = {
    ta: "இன்று காலை வானிலை மிகவும் நன்றாக இருந்தது, எனவே நாங்கள் ஆற்றங்கரையில் நடந்து கோடை விடுமுறை பற்றி பேசினோம்.",
    te: "ఈ ఉదయం వాతావరణం చాలా బాగుంది, కాబట్టి మేము నది ఒడ్డున నడిచి వేసవి సెలవుల గురించి మాట్లాడుకున్నాము.",
    kn: "ಇಂದು ಬೆಳಿಗ್ಗೆ ಹವಾಮಾನ ತುಂಬಾ ಚೆನ್ನಾಗಿತ್ತು, ಆದ್ದರಿಂದ ನಾವು ನದಿಯ ದಡದಲ್ಲಿ ನಡೆದು ರಜೆಯ ಬಗ್ಗೆ ಮಾತನಾಡಿದೆವು.",
    gu: "આજે સવારે હવામાન ખૂબ સરસ હતું, તેથી અમે નદી કિનારે ચાલ્યા અને રજાઓ વિશે વાત કરી.",
    pa: "ਅੱਜ ਸਵੇਰੇ ਮੌਸਮ ਬਹੁਤ ਵਧੀਆ ਸੀ, ਇਸ ਲਈ ਅਸੀਂ ਦਰਿਆ ਦੇ ਕਿਨਾਰੇ ਤੁਰੇ ਅਤੇ ਛੁੱਟੀਆਂ ਬਾਰੇ ਗੱਲ ਕੀਤੀ।",
    ml: "ഇന്ന് രാവിലെ കാലാവസ്ഥ വളരെ നല്ലതായിരുന്നു, അതിനാൽ ഞങ്ങൾ നദിക്കരയിലൂടെ നടന്ന് അവധിയെക്കുറിച്ച് സംസാരിച്ചു.",
  };
  for (const mode of BOTH) {
    for (const [lang, t] of Object.entries(text)) {
      assert.equal(follows("language:response_language", { language: lang }, t, mode), true, `${mode} ${lang}`);
      for (const other of Object.keys(text)) if (other !== lang) assert.equal(follows("language:response_language", { language: other }, t, mode), false);
    }
  }
});

test("the language check reads the language, not the script", () => {
  const spanish = "El tiempo era estupendo esta mañana, así que caminamos junto al río y hablamos de las vacaciones.";
  const hindi = "आज सुबह मौसम बहुत अच्छा था, इसलिए हम नदी के किनारे टहले और गर्मी की छुट्टियों की योजनाओं के बारे में बात की।";
  const russian = "Сегодня утром была прекрасная погода, поэтому мы гуляли вдоль реки и говорили о наших планах на лето.";
  for (const mode of BOTH) {
    assert.equal(follows("language:response_language", { language: "es" }, spanish, mode), true);
    assert.equal(follows("language:response_language", { language: "pt" }, spanish, mode), false, "same script, other language");
    assert.equal(follows("language:response_language", { language: "mr" }, hindi, mode), false, "Devanagari is not Marathi");
    assert.equal(follows("language:response_language", { language: "uk" }, russian, mode), false, "Cyrillic is not Ukrainian");
  }
});

test("sections wrapped in quotes are counted", () => {
  const r = '"Section 1: the plan.\nSection 2: the budget."';
  for (const mode of BOTH) assert.equal(follows("detectable_format:multiple_sections", { section_spliter: "Section", num_sections: 2 }, r, mode), true, mode);
});

test("an inline *** divider separates paragraphs", () => {
  for (const mode of BOTH) {
    assert.equal(follows("length_constraints:number_paragraphs", { num_paragraphs: 2 }, "First part. *** Second part.", mode), true, mode);
    assert.equal(follows("length_constraints:number_paragraphs", { num_paragraphs: 3 }, "One *** Two *** Three", mode), true, mode);
  }
});

test("numbered-list markers before lower-case items are not sentences (Punkt's ordinal rule)", () => {
  const r = "Steps:\n1. open the box.\n2. take the toy.";
  for (const mode of BOTH) assert.equal(follows("length_constraints:number_sentences", { num_sentences: 3, relation: "less than" }, r, mode), true, mode);
  // Before a capitalised item the reference does count the marker; mode ifeval follows it.
  assert.equal(follows("length_constraints:number_sentences", { num_sentences: 6, relation: "at least" }, "1. Apples are red.\n2. Pears are green.\n3. Plums are blue."), true);
});

test("single-letter initials do not end sentences, but the pronoun I does", () => {
  for (const mode of BOTH) {
    assert.equal(follows("length_constraints:number_sentences", { num_sentences: 2, relation: "at least" }, "J. K. Rowling wrote it. Fans loved it.", mode), true, mode);
    assert.equal(follows("length_constraints:number_sentences", { num_sentences: 3, relation: "less than" }, "J. K. Rowling wrote it. Fans loved it.", mode), true, mode);
    assert.equal(follows("length_constraints:number_sentences", { num_sentences: 2, relation: "at least" }, "So do I. Then we left.", mode), true, mode);
  }
});

test("keywords with surrounding spaces are trimmed", () => {
  for (const mode of BOTH) {
    assert.equal(follows("keywords:frequency", { keyword: " river ", frequency: 2, relation: "at least" }, "The river bends. River boats pass.", mode), true, mode);
  }
  assert.equal(follows("keywords:existence", { keywords: [" river "] }, "The river bends.", "strict-words"), true);
  assert.equal(follows("keywords:forbidden_words", { forbidden_words: [" river "] }, "The river bends.", "strict-words"), false);
});

test("two_responses allows ****** before the first or after the second response", () => {
  for (const mode of BOTH) {
    assert.equal(follows("combination:two_responses", {}, "******\nFirst answer.\n******\nSecond answer.\n******", mode), true, mode);
    assert.equal(follows("combination:two_responses", {}, "******\nOnly one answer.\n******", mode), false, mode);
  }
});

test("a ```Json fence is stripped", () => {
  for (const mode of BOTH) assert.equal(follows("detectable_format:json_format", {}, '```Json\n{"name": "Ada"}\n```', mode), true, mode);
});

test("** ** is not a highlight", () => {
  for (const mode of BOTH) {
    assert.equal(follows("detectable_format:number_highlighted_sections", { num_highlights: 1 }, "Nothing ** ** here.", mode), false, mode);
    assert.equal(follows("detectable_format:number_highlighted_sections", { num_highlights: 1 }, "Something **real** here.", mode), true, mode);
  }
});

test("word counting follows the reference: \\w+ runs", () => {
  // "Don't" and "well-known" are two words each for the reference, one each in strict-words.
  const r = "Don't stop: well-known words.";
  assert.equal(follows("length_constraints:number_words", { num_words: 6, relation: "at least" }, r), true);
  assert.equal(follows("length_constraints:number_words", { num_words: 6, relation: "at least" }, r, "strict-words"), false);
  // Devanagari vowel signs stay inside the word (NLTK's regex engine): 5 words, not 12 pieces.
  assert.equal(follows("length_constraints:number_words", { num_words: 6, relation: "less than" }, "हिन्दी में लिखा गया वाक्य"), true);
  assert.equal(follows("length_constraints:number_words", { num_words: 5, relation: "less than" }, "हिन्दी में लिखा गया वाक्य"), false);
});

test("keyword matching follows the reference: substring for existence/frequency, whole word for forbidden", () => {
  assert.equal(follows("keywords:existence", { keywords: ["rust"] }, "Rusty nails."), true);
  assert.equal(follows("keywords:existence", { keywords: ["rust"] }, "Rusty nails.", "strict-words"), false);
  assert.equal(follows("keywords:frequency", { keyword: "art", frequency: 3, relation: "at least" }, "Art, artists and smart parties."), true);
  assert.equal(follows("keywords:forbidden_words", { forbidden_words: ["art"] }, "Smart parties with artists."), true);
  assert.equal(follows("keywords:forbidden_words", { forbidden_words: ["art"] }, "Modern Art."), false);
});

test("capital-word counting follows the reference: NLTK tokens, one-letter words included", () => {
  const r = "I think NASA and the U.S. DON'T agree.";
  // Tokens I, NASA, U.S., DO, N'T are upper case: 5.
  assert.equal(follows("change_case:capital_word_frequency", { capital_frequency: 5, capital_relation: "at least" }, r), true);
  assert.equal(follows("change_case:capital_word_frequency", { capital_frequency: 6, capital_relation: "at least" }, r), false);
});
