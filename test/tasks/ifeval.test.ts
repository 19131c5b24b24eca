import { test } from "node:test";
import assert from "node:assert/strict";
import { ifevalTask, createIfevalTask, generateExamples, type Example, type IfevalMeta } from "../../src/tasks/index.ts";

test("ifeval: k constraints from distinct groups; stored solutions pass at every k, in both modes", () => {
  const strictWords = createIfevalTask({ mode: "strict-words" });
  for (let k = 1; k <= 7; k++) {
    for (const ex of generateExamples(ifevalTask, { n: 20, seed: 6, difficulty: k })) {
      const m = ex.meta as IfevalMeta;
      assert.equal(m.constraints.length, k);
      assert.equal(ex.prompt.split("\n").filter((l) => /^\d+\. /.test(l)).length, k);
      assert.equal(ifevalTask.verify(ex.solution!, ex).correct, true);
      assert.equal(strictWords.verify(ex.solution!, ex).correct, true);
    }
  }
});

test("ifeval: the modes differ where the reference and strict-words differ (substring keywords)", () => {
  const ex: Example = { id: "m", prompt: "", answer: "", task: "ifeval", meta: { constraints: [{ type: "keywords_include", keywords: ["lantern"] }] } };
  assert.equal(ifevalTask.verify("Two lanterns glowed by the harbor.", ex).correct, true);
  assert.equal(createIfevalTask({ mode: "strict-words" }).verify("Two lanterns glowed by the harbor.", ex).correct, false);
});

test("ifeval: a different response meeting the constraints passes; violations fail with reasons", () => {
  const ex: Example = {
    id: "i",
    prompt: "",
    answer: "",
    task: "ifeval",
    meta: {
      constraints: [
        { type: "lowercase" },
        { type: "no_commas" },
        { type: "keywords_include", keywords: ["kettle", "meadow"] },
        { type: "ends_with", end_phrase: "The end." },
      ],
    },
  };
  assert.equal(ifevalTask.verify("the kettle sang across the meadow. the end.", ex).correct, true);
  const v = ifevalTask.verify("The kettle, the meadow. The end.", ex);
  assert.equal(v.correct, false);
  assert.equal(v.reward, 0);
  assert.match(v.reason, /2\/4 satisfied; failed: lowercase, no_commas/);
  assert.equal(createIfevalTask({ partialCredit: true }).verify("The kettle, the meadow. The end.", ex).reward, 0.5);
  assert.equal(ifevalTask.verify("", ex).reason, "empty response");
  assert.equal(ifevalTask.verify("x", { ...ex, meta: undefined }).correct, false);
});
