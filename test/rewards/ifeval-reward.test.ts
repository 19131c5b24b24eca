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
import type { Example } from "../../src/tasks/types.ts";

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
  reward.checkOptions!({ gate: { minWords: 2 }, mode: "ifeval-loose", strict: true }, "reward.options");
});
