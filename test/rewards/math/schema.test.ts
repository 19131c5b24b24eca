// The math verifier declares what it reads (issue 26): `answer` must be a non-empty string or a finite number.
// A row without a reference is a data error — never a verifier that scores something.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getVerifier, mathExampleSchema } from "../../../src/rewards/index.ts";

test("math exampleSchema: a non-empty string or a finite number; empty, missing, null, NaN and lists rejected", () => {
  for (const ok of [{ answer: "3" }, { answer: "\\frac{3}{4}" }, { answer: 3 }, { answer: -0.5 }, { answer: "#### 72", prompt: "q" }])
    assert.equal(mathExampleSchema.safeParse(ok).success, true, JSON.stringify(ok));
  for (const bad of [{ answer: "" }, { answer: "  \n" }, {}, { answer: null }, { answer: Number.NaN }, { answer: Infinity }, { answer: ["3"] }, { answer: { v: 3 } }]) {
    const r = mathExampleSchema.safeParse(bad);
    assert.equal(r.success, false, JSON.stringify(bad));
    assert.deepEqual(r.error!.issues[0]!.path, ["answer"]);
  }
});

test("math verifier: carries the schema and refuses to grade a row without a reference", async () => {
  const v = getVerifier("math");
  assert.equal(v.exampleSchema, mathExampleSchema);
  const row = (answer: unknown) => ({ id: "r1", prompt: "q", task: "t", answer }) as never;
  // controls: a real reference grades
  assert.equal((await v.verify("\\boxed{4}", row("4"))).reward, 1);
  assert.equal((await v.verify("\\boxed{4}", row(4))).reward, 1);
  assert.equal((await v.verify("\\boxed{5}", row("4"))).reward, 0);
  // missing / empty references: an error naming the field, not a score ("undefined" would match String(undefined))
  for (const [resp, answer] of [["undefined", undefined], ["\\boxed{}", ""], ["null", null]] as const) {
    await assert.rejects(async () => v.verify(resp, row(answer)), /math verifier: example field "answer"/);
  }
});
