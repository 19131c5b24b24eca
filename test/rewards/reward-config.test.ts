/**
 * The reward: block compiled into the run's reward: single verifiers by name, components with
 * weights and gates, length shaping, user modules (sync, async, null = skip) and every failure a
 * user function can have — each a counted event named by component, never an exception.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compileReward, rewardMetrics } from "../../src/rewards/compile.ts";
import { rewardConfigSchema, resolveRewardConfig, type RewardConfigInput } from "../../src/rewards/config.ts";
import { getTask } from "../../src/tasks/index.ts";
import { getVerifier, registerVerifier, defineReward, toVerdict, verifierNames } from "../../src/rewards/registry.ts";
import { parseRunConfig } from "../../src/config/schema.ts";
// The method registry registers its config checks (registerConfigCheck) when loaded, as "rlvr" does.
import "../../src/methods/index.ts";
import { createVerifierPool, type VerifierPool } from "../../src/rewards/pool/pool.ts";
import "../../src/tasks/index.ts";
import type { Example } from "../../src/core/example.ts";

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, "fixtures");
const ex = (answer: string, meta?: Record<string, unknown>): Example => ({ id: `e-${answer}`, prompt: "q", answer, task: "dataset", ...(meta ? { meta } : {}) });
const compile = (r: RewardConfigInput, o: Parameters<typeof compileReward>[1] = {}) => compileReward(rewardConfigSchema.parse(r), { baseDir: fixtures, ...o });

test("one registry: built-ins and every procedural task are registered verifiers", () => {
  const names = verifierNames();
  for (const n of ["exact", "f1", "choice", "math", "format", "ifeval", "code", "majority", "task", "module", "addition", "countdown", "maximum"]) assert.ok(names.includes(n), n);
  assert.throws(() => getVerifier("nope"), /unknown verifier "nope"; registered verifiers: .*exact/);
  assert.throws(() => registerVerifier("exact", () => toVerdict(1)), /already registered/);
});

test("reward: {verifier: exact} — reward, correct, the component's score, one group per example", async () => {
  const r = await compile({ verifier: "exact" });
  assert.deepEqual(r.names, ["exact"]);
  const a = ex("paris");
  const b = ex("rome");
  const { verdicts, events } = await r.scoreBatch(["Paris", "the answer is Lyon", "Rome."], [a, a, b]);
  assert.deepEqual(verdicts.map((v) => v.reward), [1, 0, 1]);
  assert.deepEqual(verdicts.map((v) => v.correct), [true, false, true]);
  assert.deepEqual(verdicts.map((v) => v.components), [{ exact: 1 }, { exact: 0 }, { exact: 1 }]);
  assert.equal(verdicts[1]!.extracted, "Lyon");
  assert.deepEqual(events, {});
  assert.deepEqual(rewardMetrics(verdicts, events), { "reward/skipped": 0, "reward/exact": 2 / 3 });
});

test("components: weights, a format gate, per-component scores, correct from the first non-format component", async () => {
  const r = await compile({
    components: [
      { verifier: "format", weight: 0.5, options: { template: "<a>{answer}</a>" } },
      { name: "accuracy", verifier: "exact", gate: "format" },
    ],
  });
  assert.equal(r.primary, "accuracy");
  const e = ex("7");
  const { verdicts } = await r.scoreBatch(["<a>7</a>", "<a>8</a>", "answer: 7"], [e, e, e]);
  assert.deepEqual(verdicts.map((v) => v.reward), [1.5, 0.5, 0]); // the gate zeroes a right answer in the wrong layout
  assert.deepEqual(verdicts.map((v) => v.components), [{ format: 1, accuracy: 1 }, { format: 1, accuracy: 0 }, { format: 0, accuracy: 0 }]);
  assert.deepEqual(verdicts.map((v) => v.correct), [true, false, true]); // correctness is the verifier's, before the gate
});

test("shaping: DAPO overlong on token lengths; cosine replaces its correctness component", async () => {
  const o = await compile({ verifier: "exact", shaping: [{ type: "overlong", buffer: 4 }] }, { maxNewTokens: 10 });
  const e = ex("a");
  const { verdicts } = await o.scoreBatch(["a", "a", "b"], [e, e, e], { lengths: [6, 8, 10] });
  assert.deepEqual(verdicts.map((v) => v.components!.overlong), [0, -0.5, -1]);
  assert.deepEqual(verdicts.map((v) => v.reward), [1, 0.5, -1]);
  const c = await compile({ verifier: "exact", shaping: [{ type: "cosine", maxLength: 10, correctStart: 2, correctEnd: 1, wrongStart: -1, wrongEnd: 0 }] });
  const cv = (await c.scoreBatch(["a", "a", "b"], [e, e, e], { lengths: [0, 5, 0] })).verdicts;
  assert.deepEqual(cv.map((v) => v.reward), [2, 1.5, -1]);
  assert.equal(cv[0]!.components!.exact, 1); // still logged
  await assert.rejects(compile({ verifier: "exact", shaping: [{ type: "overlong" }] }), /shaping\[0\]\.maxLength/);
});

test("group-aware verifier: majority vote within each group (group ids)", async () => {
  const r = await compile({ verifier: "majority" });
  const e = ex("x");
  const resp = ["answer: 3", "answer: 3", "answer: 4", "answer: 9", "answer: 9", "answer: 1"];
  const { verdicts } = await r.scoreBatch(resp, [e, e, e, e, e, e], { groupIds: Int32Array.from([0, 0, 0, 1, 1, 1]) });
  assert.deepEqual(verdicts.map((v) => v.reward), [1, 1, 0, 1, 1, 0]);
});

test("user module: sync and async functions by path (relative to the config folder), step and options reach them", async () => {
  const s = await compile({ module: "./user-rewards.ts", export: "endsWith" });
  const e = ex("42");
  assert.deepEqual((await s.scoreBatch(["so 42", "41"], [e, e])).verdicts.map((v) => v.reward), [1, 0]);
  const one = s.verifyOne("so 42", e); // a sync function scores synchronously (eval, guided methods)
  assert.ok(!(one instanceof Promise) && one.reward === 1 && one.correct);
  const a = await compile({ module: "./user-rewards.ts", export: "endsWithAsync" });
  const av = (await a.scoreBatch(["so 42"], [e], { step: 7 })).verdicts[0]!;
  assert.deepEqual([av.reward, av.correct, av.extracted, av.reason], [1, true, "42", "step 7"]);
  const d = await compile({ module: "./user-rewards.ts" }); // default export
  assert.equal((await d.scoreBatch(["42"], [e])).verdicts[0]!.reward, 1);
  const o = await compile({ module: "./user-rewards.ts", export: "scaled", options: { scale: 0.25 } });
  assert.equal((await o.scoreBatch(["x"], [e])).verdicts[0]!.reward, 0.25);
  await assert.rejects(compile({ module: "./user-rewards.ts", export: "nope" }), /config error at reward\.module: reward module .*user-rewards\.ts has no function export "nope" \(function exports: .*endsWith/);
  await assert.rejects(compile({ module: "./missing.ts" }), /config error at reward\.module: cannot load reward module .*missing\.ts/);
});

test("user module failures are counted events with the fallback reward; null skips the sample", async () => {
  const e = ex("a");
  // maxErrorRate 1: count every failure without stopping (the default stops past half a batch, below).
  const run = async (exp: string, extra: Record<string, unknown> = {}) => {
    const r = await compile({ components: [{ name: "mine", module: "./user-rewards.ts", export: exp, timeoutMs: 200, ...extra }, { verifier: "exact", weight: 0 }], maxErrorRate: 1 });
    return r.scoreBatch(["a", "bb", "ccc"], [e, e, e]);
  };
  const skip = await run("skipOdd");
  assert.ok(Number.isNaN(skip.verdicts[0]!.reward) && skip.verdicts[1]!.reward === 1 && Number.isNaN(skip.verdicts[2]!.reward));
  assert.equal(skip.events["reward/skipped"], 2);
  assert.equal(rewardMetrics(skip.verdicts, skip.events)["reward/mine"], 1);
  for (const [exp, event] of [["wrongShape", "reward/errors/mine"], ["infinite", "reward/errors/mine"], ["throws", "reward/errors/mine"], ["hangs", "reward/timeouts/mine"]] as const) {
    const out = await run(exp);
    assert.deepEqual(out.verdicts.map((v) => v.reward), [0, 0, 0], exp);
    assert.equal(out.events[event], 3, `${exp}: ${JSON.stringify(out.events)}`);
    if (event === "reward/errors/mine") assert.equal(out.events["verifier/errors"], 3, "verifier/errors counts in-process errors too");
  }
  const strict = await compile({ components: [{ name: "mine", module: "./user-rewards.ts", export: "throws" }] });
  await assert.rejects(strict.scoreBatch(["a", "bb", "ccc"], [e, e, e]), /^RewardError: reward error: reward component "mine" \(user-rewards\.ts#throws\) failed on 3 of 3 samples \(more than reward\.maxErrorRate 0\.5\); first error: /);
  const fb = await run("throws", { fallback: -1 });
  assert.deepEqual(fb.verdicts.map((v) => v.reward), [-1, -1, -1]);
  const fbNull = await run("throws", { fallback: null });
  assert.ok(fbNull.verdicts.every((v) => Number.isNaN(v.reward)));
  assert.equal(fbNull.events["reward/skipped"], 3);
});

test("a procedural task's run uses its own verifier, also the ifeval task (named like the built-in verifier)", async () => {
  const { reward, at } = resolveRewardConfig({ data: { task: "ifeval" } });
  assert.equal(at, "data.task");
  const r = await compileReward(reward, { at });
  assert.deepEqual(r.names, ["ifeval"]);
  const task = getTask("ifeval");
  const e: Example = { id: "i", prompt: "", answer: "", task: "ifeval", meta: { constraints: [{ type: "no_commas" }, { type: "lowercase" }] } };
  for (const resp of ["all lower, with a comma", "all lower no comma", "UPPER"]) {
    const v = (await r.scoreBatch([resp], [e])).verdicts[0]!;
    assert.equal(v.reward, task.verify(resp, e).reward, resp); // the task's rule (all or nothing), not the built-in's fraction
  }
  const b = await compile({ verifier: "ifeval" });
  assert.equal((await b.scoreBatch(["all lower, with a comma"], [e])).verdicts[0]!.reward, 0); // the built-in reward: all or nothing too
  const partial = await compile({ verifier: "ifeval", options: { strict: false } });
  assert.equal((await partial.scoreBatch(["all lower, with a comma"], [e])).verdicts[0]!.reward, 0.5); // partial credit, opt-in
  assert.deepEqual(resolveRewardConfig({ data: { task: "countdown" } }).reward.verifier, "countdown");
});

test("defineReward registers a function a config can name", async () => {
  defineReward({ name: "test/short", score: (r) => (r.length <= 3 ? 1 : 0) });
  const r = await compile({ verifier: "test/short" });
  assert.deepEqual(r.verifyOne("abc", ex("-")), { correct: true, reward: 1, extracted: null, reason: "reward 1" });
  assert.deepEqual((await r.scoreBatch(["abc", "abcd"], [ex("-"), ex("-")])).verdicts.map((v) => v.reward), [1, 0]);
});

test("config errors name the field: unknown verifier, bad options, a custom dataset without a verifier", async () => {
  await assert.rejects(compile({ verifier: "exactt" }), /config error at reward\.verifier: unknown verifier "exactt"; did you mean "exact"\? registered: .*exact/);
  await assert.rejects(compile({ verifier: "f1", options: { treshold: 1 } }), /config error at reward\.options\.treshold: unknown option; options: extract, threshold/);
  await assert.rejects(compile({ components: [{ verifier: "exact" }, { verifier: "exact" }] }), /two components are named "exact"/);
  await assert.rejects(compile({ components: [{ name: "mean", verifier: "exact" }] }), /components\[0\]: the component name "mean" is taken by a metric \(reward\/mean\)/);
  await assert.rejects(compile({ components: [{ verifier: "exact", gate: "format" }] }), /gate: no component named "format"/);
  assert.throws(() => rewardConfigSchema.parse({ verifier: "exact", module: "./x.ts" }), /exactly one of verifier/);
  const base = { model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2 } }, tokenizer: { type: "char", alphabet: "ab" } } as const;
  assert.throws(() => parseRunConfig({ ...base, data: { train: "rows.jsonl" } }), /config error in config at data\.verifier: a custom dataset \(data\.train rows\.jsonl\) must name its verifier; set reward: \{verifier: <name>\} \(built-in: exact, f1, choice, math/);
  assert.doesNotThrow(() => parseRunConfig({ ...base, data: { train: "rows.jsonl" }, reward: { verifier: "exact" } }));
  assert.doesNotThrow(() => parseRunConfig({ ...base, data: { train: "rows.jsonl", verifier: "exact" } }));
  assert.doesNotThrow(() => parseRunConfig({ ...base, data: { train: "rows.jsonl", preset: "gsm8k" } })); // the preset implies math
  assert.throws(() => parseRunConfig({ ...base, data: { train: "rows.jsonl", verifier: "exact" }, reward: { verifier: "exact" } }), /at reward: both reward and data\.verifier/);
  assert.throws(
    () => parseRunConfig({ ...base, data: { task: "addition" }, rl: { steps: 1, algorithm: "dapo" }, reward: { verifier: "addition", shaping: [{ type: "overlong" }] } }),
    /at reward\.shaping: the algorithm already applies the DAPO overlong punishment/,
  );
});

let pool: VerifierPool | null = null;
after(() => pool?.close());

test("in the verifier pool: a user function that spins is stopped (timeout event named by component), the module loads in the worker", { timeout: 120_000 }, async () => {
  pool = createVerifierPool({ size: 1, timeoutMs: 10_000, preloadMath: false });
  const r = await compile({ components: [{ name: "mine", module: "./user-rewards.ts", export: "spins", timeoutMs: 1500 }, { verifier: "exact" }], maxErrorRate: 1 }, { pool: () => pool! });
  const e = ex("a");
  const out = await r.scoreBatch(["a"], [e]);
  assert.equal(out.verdicts[0]!.reward, 1); // fallback 0 + exact 1
  assert.equal(out.events["reward/timeouts/mine"], 1);
  assert.equal(out.events["verifier/timeouts"], 1);
  const ok = await compile({ module: "./user-rewards.ts", export: "endsWithAsync" }, { pool: () => pool! });
  const v = (await ok.scoreBatch(["so a"], [e], { step: 3 })).verdicts[0]!;
  assert.deepEqual([v.reward, v.reason], [1, "step 3"]);
});
