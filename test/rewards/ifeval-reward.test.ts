// The IFEval reward (`ifeval`, gated) beside the reference's scores (`ifeval-reference`), and the
// rows both refuse at load. Exploits: degenerate responses that satisfy every constraint nothing
// can violate under the reference rules; controls: real answers that must still score 1.
import { test } from "node:test";
import assert from "node:assert/strict";
import "../../src/rewards/verifiers.ts";
import { getVerifier } from "../../src/rewards/registry.ts";
import { fromIFEval, gateReason, type Constraint } from "../../src/rewards/ifeval/index.ts";
import { verifyRow } from "../../src/cli/commands/verify.ts";
import { ifevalTask } from "../../src/tasks/index.ts";
import type { Example } from "../../src/core/example.ts";

const reward = getVerifier("ifeval");
const reference = getVerifier("ifeval-reference");
const row = (constraints: Constraint[]): Example => ({ id: "r", prompt: "", answer: "", task: "ifeval", meta: { constraints } });
const score = async (v: typeof reward, response: string, constraints: Constraint[], options?: unknown) => (await v.verify(response, row(constraints), { options })).reward;

/** Constraints a response that says nothing satisfies under the reference rules. */
const LENIENT: Constraint[] = fromIFEval(
  ["punctuation:no_comma", "length_constraints:number_words", "keywords:forbidden_words", "length_constraints:number_sentences", "language:response_language"],
  [{}, { relation: "less than", num_words: 50 }, { forbidden_words: ["cat"] }, { relation: "less than", num_sentences: 3 }, { language: "ta" }],
);

const DEGENERATE = ["1", "¹", "<!-- a -->", "٣", "42.", "<b></b>7", "```\n1\n```", "a", "1 2 3 4", "<!-- hello world", "½ ①", "— 1 —", "<br/>x<br/>", "<!-- இது தமிழ் -->"];

test("exploit: digits, symbols or markup only score 0 under the reward, for every language asked", async () => {
  for (const r of DEGENERATE) {
    for (const language of ["ta", "en", "ja", "ru"]) {
      const cs = LENIENT.map((c) => (c.type === "language:response_language" ? { ...c, language } : c));
      assert.equal(await score(reward, r, cs), 0, `${JSON.stringify(r)} (${language})`);
    }
  }
  // Side by side: the reference's scores let the same response through (that is what it measures).
  assert.equal(await score(reference, "1", LENIENT), 1);
  assert.equal(await score(reference, "¹", LENIENT), 1);
  assert.ok((await score(reference, "<!-- a -->", LENIENT)) >= 0.8);
});

test("exploit: a language the markup claims but the text does not speak scores 0", async () => {
  const tamil = "<!-- இது ஒரு தமிழ் வாக்கியம். நான் தமிழில் எழுதுகிறேன். இது மிகவும் நல்லது. -->\nOk fine";
  const cs = fromIFEval(["language:response_language"], [{ language: "ta" }]);
  assert.equal(await score(reward, tamil, cs), 0);
  assert.match(gateReason(tamil, cs) ?? "", /language/);
});

test("controls: real answers score 1 under the reward and the reference alike", async () => {
  const cases: [string, Constraint[]][] = [
    ["Hello there my friend, how are you", fromIFEval(["length_constraints:number_words", "language:response_language"], [{ relation: "less than", num_words: 50 }, { language: "en" }])],
    ["Hello there my friend", LENIENT.slice(0, 4)],
    ["நான் இன்று பள்ளிக்குச் சென்றேன். அங்கே என் நண்பர்களைச் சந்தித்தேன்.", fromIFEval(["language:response_language"], [{ language: "ta" }])],
    ["今日はとても良い天気ですね。公園に行きましょう。", fromIFEval(["language:response_language"], [{ language: "ja" }])],
    ["<b>Bonjour</b> tout le monde, comment allez-vous aujourd'hui ?", fromIFEval(["language:response_language"], [{ language: "fr" }])],
    ["Да", fromIFEval(["punctuation:no_comma"], [{}])],
  ];
  for (const [r, cs] of cases) {
    assert.equal(await score(reward, r, cs), 1, r);
    assert.equal(await score(reference, r, cs), 1, r);
  }
  // The gate's word count is an option; gate: false is the reference's scores.
  const lenient = LENIENT.slice(0, 4);
  assert.equal(await score(reward, "Hi there", lenient, { gate: { minWords: 3 } }), 0);
  assert.equal(await score(reward, "Hi there friend", lenient, { gate: { minWords: 3 } }), 1);
  assert.equal(await score(reward, "1", LENIENT, { gate: false }), 1);
});

/** The audit's row (issue 26): at least 40 words, no commas, mention "whiskers". */
const CATS: Constraint[] = fromIFEval(["length_constraints:number_words", "punctuation:no_comma", "keywords:existence"], [{ relation: "at least", num_words: 40 }, {}, { keywords: ["whiskers"] }]);
const CATS_PROMPT = "Write about cats in at least 40 words, without commas, and mention whiskers.";

test("exploit: degenerate answers get no partial credit (all or nothing by default; partial credit is opt-in)", async () => {
  for (const r of ["\\boxed{}", "Answer:", "The answer is 1.", "PASSED", "All tests passed.", "Correct", CATS_PROMPT, `<answer>${CATS_PROMPT}</answer>`, "A or B or C or D or E"]) {
    assert.equal(await score(reward, r, CATS), 0, r);
  }
  // strict: false is the fraction satisfied (what the reference reports per instruction)
  assert.ok(Math.abs((await score(reward, "The answer is 1.", CATS, { strict: false })) - 1 / 3) < 1e-9);
  assert.ok(Math.abs((await score(reference, "The answer is 1.", CATS)) - 1 / 3) < 1e-9);
  assert.equal(await score(reference, "The answer is 1.", CATS, { strict: true }), 0);
});

test("exploit: the prompt or its keywords pasted line after line score 0 (repetition gate)", async () => {
  const stuffed = [
    Array(8).fill("Write about cats least words without commas and mention whiskers").join("\n"),
    Array(8).fill("length_constraints number_words least punctuation no_comma keywords existence whiskers").join("\n"),
    "whiskers ".repeat(60),
    Array(10).fill("Cats have long whiskers and soft fur").join(" "),
  ];
  for (const r of stuffed) {
    assert.equal(await score(reward, r, CATS), 0, r);
    assert.equal(await score(reward, r, CATS, { strict: false }), 0, r);
    assert.match(gateReason(r, CATS) ?? "", /repetitive/);
    assert.equal(await score(reference, r, CATS), 1, r); // the reference's scores let it through
  }
  assert.equal(await score(reward, stuffed[0]!, CATS, { gate: { minDistinct: 0 } }), 1); // the check is an option
});

/** Varied answers of 40–300 words (English, French, Japanese) that the gates must let through. */
const CATS_EN = "Cats are quiet hunters that share our homes. They sleep for most of the day and wake at dusk to patrol the house. Their whiskers sense tiny changes in the air so a cat can move through a dark room without touching the furniture. A happy cat purrs and kneads a soft blanket before it settles down again.";
const CATS_EN_LONG = [
  "Few animals have lived beside people as long as the domestic cat. Farmers in the ancient Near East welcomed wild cats because they kept mice away from stored grain and over thousands of years those visitors became companions.",
  "A cat's body is built for the ambush. Its spine bends like a spring and its back legs push it forward in a sudden leap. The claws stay sheathed until they are needed which keeps them sharp for climbing and catching prey.",
  "The senses of a cat are remarkable. Its eyes gather light so well that it sees in rooms we would call dark. Its ears turn independently to locate a rustle behind the sofa. Its whiskers are deeply rooted hairs that read air currents and measure openings so the animal knows whether its shoulders will fit through a gap.",
  "Cats also talk to us in their own way. A slow blink signals trust while a tail held high with a little hook at the tip greets a friend. Many owners learn that a particular meow means breakfast and another means the door should open right now.",
  "Caring for a cat means fresh water and good food and regular visits to a veterinarian. It also means play because an indoor cat needs to chase and pounce to stay fit and calm. A feather on a string or a crumpled ball of paper can keep one busy for an hour.",
].join("\n\n");
const CATS_FR = "Les chats sont des animaux curieux et indépendants. Ils passent une grande partie de la journée à dormir au soleil puis se réveillent le soir pour explorer la maison. Leurs moustaches les aident à mesurer les passages étroits et à sentir le moindre mouvement de l'air. Un chat content ronronne doucement sur les genoux de son maître.";
const CATS_JA = "猫はとても静かな動物です。昼間はほとんど寝ていて、夕方になると家の中を見回ります。猫のひげは空気のわずかな動きを感じ取るので、暗い部屋でも家具にぶつからずに歩けます。うれしいときはのどを鳴らし、柔らかい毛布をふみふみしてから眠ります。";

test("controls: varied answers of 40–300 words pass the repetition gate and score 1", async () => {
  assert.equal(await score(reward, CATS_EN, CATS), 1);
  assert.equal(await score(reward, CATS_EN_LONG, CATS), 1);
  assert.equal(await score(reward, `${CATS_PROMPT}\n\n${CATS_EN.replaceAll(",", "")}`.replace(CATS_PROMPT, "Write about cats in at least 40 words without commas and mention whiskers."), CATS), 1); // the prompt repeated once (combination:repeat_prompt)
  const fr = fromIFEval(["language:response_language", "length_constraints:number_words", "punctuation:no_comma"], [{ language: "fr" }, { relation: "at least", num_words: 40 }, {}]);
  assert.equal(await score(reward, CATS_FR, fr), 1);
  const ja = fromIFEval(["language:response_language", "punctuation:no_comma"], [{ language: "ja" }, {}]);
  assert.equal(await score(reward, CATS_JA, ja), 1);
  for (const r of [CATS_EN, CATS_EN_LONG, CATS_FR, CATS_JA]) assert.equal(gateReason(r, []), null, r);
  // a short refrain under REPEAT_MIN_WORDS words is not degenerate
  assert.equal(await score(reward, "Row row row your boat gently down the stream", fromIFEval(["punctuation:no_comma"], [{}])), 1);
});

test("the procedural ifeval task's reward is gated too", () => {
  const ex = ifevalTask.generate({ seed: 3, index: 0, difficulty: 2, split: "train" });
  assert.equal(ifevalTask.verify("1", ex).reward, 0);
  assert.equal(ifevalTask.verify(ex.solution!, ex).reward, 1);
});

test("data errors: no constraints, an empty list, another key or an unknown type are refused at load, naming the field", async () => {
  const schema = reward.exampleSchema!;
  assert.equal(reference.exampleSchema, schema);
  const bad: [Record<string, unknown>, string][] = [
    [{ answer: "", meta: { constraints: [] } }, "meta.constraints"],
    [{ answer: "", meta: { instructions: [{ type: "no_commas" }] } }, "meta.constraints"],
    [{ answer: "[]", meta: {} }, "answer"],
    [{ answer: "", meta: { constraints: [{ type: "no_such_rule" }] } }, "meta.constraints.0.type"],
    [{ answer: "", meta: { constraints: ["punctuation:no_comma"] } }, "meta.constraints.0"],
    [{ answer: "", meta: { constraints: [{ type: "no_commas" }, { type: "word_count", relation: "less than" }] } }, "meta.constraints.1"],
    [{ answer: "", meta: { instruction_id_list: ["length_constraints:number_words"], kwargs: [{ relation: "sideways", num_words: 5 }] } }, "meta.instruction_id_list.0"],
    [{ answer: "", meta: { instruction_id_list: [], kwargs: [] } }, "meta.instruction_id_list"],
    [{ answer: "", meta: { instruction_id_list: ["punctuation:no_comma"], kwargs: [{}, {}] } }, "meta.kwargs"],
  ];
  for (const [r, field] of bad) {
    const out = schema.safeParse(r);
    assert.equal(out.success, false, JSON.stringify(r));
    assert.equal(out.error!.issues[0]!.path.join("."), field, JSON.stringify(out.error!.issues));
    // Graded anyway (no load-time check), the row is an error, never a score.
    await assert.rejects(async () => reward.verify("Hello there", r as unknown as Example), new RegExp(field.replaceAll(".", "\\.")));
  }
  for (const good of [
    { answer: "", meta: { constraints: [{ type: "no_commas" }] } },
    { answer: "", meta: { instruction_id_list: ["punctuation:no_comma", "length_constraints:number_words"], kwargs: [{}, { relation: "less than", num_words: 9 }] } },
    { answer: JSON.stringify([{ type: "lowercase" }]), meta: {} },
  ]) {
    assert.equal(schema.safeParse(good).success, true, JSON.stringify(good));
  }
  // `rlvr verify ifeval` refuses an empty list the same way.
  await assert.rejects(verifyRow("ifeval", { response: "anything", constraints: [] }), /empty constraint list/);
});

test("options are checked: unknown keys and bad gate values are config errors", () => {
  assert.throws(() => reward.checkOptions!({ gate: "yes" }, "reward.options"), /config error at reward\.options\.gate/);
  assert.throws(() => reward.checkOptions!({ gate: { minWords: 0 } }, "reward.options"), /reward\.options\.gate/);
  assert.throws(() => reference.checkOptions!({ gate: true }, "reward.options"), /unknown option/);
  assert.throws(() => reward.checkOptions!({ mode: "lenient" }, "reward.options"), /one of ifeval, ifeval-loose, strict-words/);
  assert.throws(() => reward.checkOptions!({ gate: { minDistinct: 1.5 } }, "reward.options"), /reward\.options\.gate/);
  assert.throws(() => reward.checkOptions!({ gate: { maxRepeat: 3 } }, "reward.options"), /reward\.options\.gate/);
  reward.checkOptions!({ gate: { minWords: 2, minDistinct: 0.3 }, mode: "ifeval-loose", strict: false }, "reward.options");
  reward.checkOptions!({ gate: { minWords: 2 }, mode: "ifeval-loose", strict: true }, "reward.options");
});
