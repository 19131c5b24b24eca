import { test } from "node:test";
import assert from "node:assert/strict";
import { composeRewards, countEvents } from "../../src/rewards/compose.ts";
import { majorityVoteComponent, overlongComponent, cosineComponent, sampleComponent } from "../../src/rewards/components.ts";
import { grpoLambdaComponent } from "../../src/rewards/shaping/grpo-lambda.ts";
import { verifyFormat } from "../../src/rewards/format.ts";
import { verifyExactMatch } from "../../src/rewards/exact.ts";
import type { RewardGroup } from "../../src/rewards/types.ts";

type Ex = { answer: string };
const group = (responses: string[], answer = "4", lengths?: number[]): RewardGroup<Ex> => ({ prompt: "2+2?", responses, example: { answer }, lengths });

test("weighted sum of named components, each logged separately", async () => {
  const fn = composeRewards<Ex>({
    components: [
      { name: "correct", sample: (s) => verifyExactMatch(s.response, s.example.answer) },
      { name: "format", weight: 0.5, sample: (s) => verifyFormat(s.response) },
      { name: "len", weight: 0, sample: (s) => s.length },
    ],
  });
  const out = await fn(group(["<think>x</think><answer>4</answer>", "4", "<think>x</think><answer>5</answer>"]));
  assert.deepEqual(out.components.correct, [1, 1, 0]);
  assert.deepEqual(out.components.format, [1, 0, 1]);
  assert.deepEqual(out.total, [1.5, 1, 0.5]);
  assert.equal(out.components.len![1], 1);
  assert.deepEqual(out.events, []);
});

test("gates: a component counts only where another passes", async () => {
  const fn = composeRewards<Ex>({
    components: [
      { name: "correct", sample: (s) => s.response === "4" },
      { name: "format", weight: 0.5, gate: "correct", sample: () => 1 },
      { name: "bonus", gate: { component: "correct", min: 2 }, sample: () => 1 },
    ],
  });
  const out = await fn(group(["4", "5"]));
  assert.deepEqual(out.raw.format, [1, 1]);
  assert.deepEqual(out.components.format, [1, 0]);
  assert.deepEqual(out.components.bonus, [0, 0]);
  assert.deepEqual(out.total, [1.5, 0]);
});

test("null skips a sample; weight-0 nulls do not", async () => {
  const fn = composeRewards<Ex>({
    components: [
      { name: "v", sample: (s) => (s.response === "?" ? null : 1) },
      { name: "logged", weight: 0, sample: () => null },
    ],
  });
  const out = await fn(group(["a", "?"]));
  assert.deepEqual(out.total, [1, null]);
});

test("async components, errors and timeouts become fallbacks and counted events", async () => {
  const fn = composeRewards<Ex>({
    components: [
      { name: "slow", timeoutMs: 50, onError: -1, sample: (s) => new Promise((r) => setTimeout(() => r(1), s.index === 0 ? 5 : 500)) },
      { name: "bad", onError: null, weight: 0, sample: (s) => { if (s.index === 1) throw new Error("nope"); return 0.5; } },
      { name: "emitter", weight: 0, sample: (s) => { s.emit("custom/thing"); return 0; } },
    ],
  });
  const out = await fn(group(["a", "b"]));
  assert.deepEqual(out.components.slow, [1, -1]);
  assert.deepEqual(out.components.bad, [0.5, null]);
  assert.deepEqual(countEvents(out.events), { "reward/timeouts/slow": 1, "reward/errors/bad": 1, "custom/thing": 2 });
});

test("group-aware components: majority vote", async () => {
  const fn = composeRewards<Ex>({
    components: [majorityVoteComponent({ answer: (r) => r.match(/\d+/)?.[0] ?? null })],
  });
  const out = await fn(group(["3", "x=4", "4", "3 or", "none"]));
  assert.deepEqual(out.total, [1, 0, 0, 1, 0], "tie 3 vs 4 goes to the earliest to reach the top count");
});

test("GRPO-λ through composition: top-λ of a batch, correctness logged only", async () => {
  const fn = composeRewards<Ex>({
    components: [
      { name: "correct", weight: 0, sample: (s) => s.response.startsWith(s.example.answer) },
      grpoLambdaComponent({ correctness: "correct", lambda: 0.5 }),
    ],
  });
  const easy = group(["4", "4 because", "4 because of many long reasons", "5"], "4", [1, 3, 7, 2]);
  const hard = group(["4", "5", "6", "7"], "4", [1, 3, 7, 2]);
  const [a, b] = await fn.batch([easy, hard]);
  assert.deepEqual(b!.total, [1, 0, 0, 0]);
  assert.deepEqual(a!.components.correct, [1, 1, 1, 0]);
  assert.ok(a!.total[0]! > a!.total[1]! && a!.total[1]! > a!.total[2]!);
  // one group alone is a batch of one: top-λ selects it
  const single = await fn(hard);
  assert.ok(single.total[0]! > 1);
});

test("shaping components: overlong and cosine", async () => {
  const fn = composeRewards<Ex>({
    components: [
      { name: "correct", weight: 0, sample: (s) => s.response === "4" },
      cosineComponent({ correctness: "correct", maxLength: 100 }),
      overlongComponent({ maxLength: 100, buffer: 20 }),
    ],
  });
  const out = await fn(group(["4", "5"], "4", [0, 90]));
  assert.equal(out.components.cosine![0], 2);
  assert.deepEqual(out.components.overlong, [0, -0.5]);
});

test("spec errors name the field", () => {
  assert.throws(() => composeRewards({ components: [{ name: "a", sample: () => 1 }, { name: "a", sample: () => 1 }] }), /components\[1\]\.name/);
  assert.throws(() => composeRewards({ components: [{ name: "a" }] }), /exactly one of sample, group, batch/);
  assert.throws(() => composeRewards({ components: [sampleComponent("a", () => 1, { gate: "zzz" })] }), /components\[0\]\.gate: no component named "zzz"/);
});

test("a sample component sees its own example, the step and its group; Verdict values count by reward, NaN skips", async () => {
  const fn = composeRewards<Ex>({
    components: [
      { name: "own", sample: (s) => ({ reward: s.example.answer === s.response ? 1 : 0, correct: false }) },
      { name: "ctx", weight: 0, sample: (s) => (s.step ?? -1) * 10 + s.group.responses.length },
      { name: "skip", weight: 0.5, sample: (s) => (s.index === 2 ? NaN : 0) },
    ],
  });
  const g: RewardGroup<Ex> = { prompt: "p", responses: ["a", "b", "c"], example: { answer: "a" }, examples: [{ answer: "a" }, { answer: "b" }, { answer: "x" }], step: 4 };
  const out = await fn(g);
  assert.deepEqual(out.components.own, [1, 1, 0]); // each response against its own example; reward, not correct
  assert.deepEqual(out.components.ctx, [43, 43, 43]);
  assert.deepEqual(out.total, [1, 1, null]); // NaN = unscorable: the sample is skipped
});
