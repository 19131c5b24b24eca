// DataSelection (src/rollout/selection.ts): config wiring, prompt drawing at the curriculum's
// difficulty, domain pools, group filters, and checkpoint round trips.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { DataSelection } from "../../src/rollout/selection.ts";
import { getTask } from "../../src/tasks/index.ts";
import type { Verdict } from "../../src/tasks/types.ts";
import type { Example } from "../../src/core/example.ts";

function cfgWith(rl: Record<string, unknown>, data: Record<string, unknown> = { task: "maximum", difficulty: 5, trainSize: 32 }, algorithm: unknown = "grpo") {
  const input = { seed: 5, model: { init: { hiddenSize: 16 } }, tokenizer: { type: "char", alphabet: "0123456789,>" }, data, rl: { steps: 1, algorithm, ...rl } } as RunConfigInput;
  return parseRunConfig(input, "test.yaml");
}
const v = (correct: boolean, reward = correct ? 1 : 0): Verdict => ({ correct, reward, extracted: null, reason: "" });
const ex = (task: string, i: number, difficulty?: number): Example => ({ id: `${task}-${i}`, prompt: `${task}${i}`, answer: "0", task, ...(difficulty !== undefined ? { difficulty } : {}) });

describe("DataSelection", () => {
  it("with nothing configured: no filter, one generation batch, prompts in the trainer's order", () => {
    const cfg = cfgWith({});
    const train = [ex("a", 0), ex("a", 1), ex("a", 2)];
    const s = new DataSelection(cfg, train);
    assert.equal(s.filtering, false);
    assert.equal(s.maxGenBatches, 1);
    const cur = { order: [2, 0, 1], cursor: 0 };
    assert.deepEqual(s.draw(cur, 4, 0, 0).map((e) => e.id), ["a-2", "a-0", "a-1", "a-2"]);
    assert.equal(cur.cursor, 4);
    assert.equal(s.keep([v(true), v(true)]), true);
  });

  it("the dapo preset comes with rl.dynamicSampling's defaults; an rl.dynamicSampling block decides", () => {
    const cfg = cfgWith({}, undefined, "dapo");
    const s = new DataSelection(cfg, [ex("a", 0)]);
    assert.equal(s.dynamicMetric, "accuracy");
    assert.equal(s.maxGenBatches, 10);
    assert.equal(s.keep([v(true), v(true)]), false);
    assert.equal(s.keep([v(true), v(false)]), true);
    assert.deepEqual(cfg.rl!.dynamicSampling, { enabled: true, metric: "accuracy", maxGenBatches: 10 });
    // rl.dynamicSampling overrides it.
    const off = cfgWith({ dynamicSampling: { enabled: false } }, undefined, "dapo");
    assert.equal(new DataSelection(off, [ex("a", 0)]).filtering, false);
    assert.equal(new DataSelection(cfgWith({}, undefined, "grpo"), [ex("a", 0)]).filtering, false, "other presets: off");
  });

  it("the algorithm block's old dynamicSampling is a config error naming the file and where it moved", () => {
    assert.throws(() => cfgWith({}, undefined, { preset: "grpo", dynamicSampling: true }), /^ConfigError: config error in test\.yaml at rl\.algorithm\.dynamicSampling: dynamic sampling moved to rl\.dynamicSampling/);
  });

  it("rl.dynamicSampling on reward keeps groups with different rewards even when accuracy is identical", () => {
    const cfg = cfgWith({ dynamicSampling: { metric: "reward", maxGenBatches: 3 } });
    const s = new DataSelection(cfg, [ex("a", 0)]);
    assert.equal(s.maxGenBatches, 3);
    assert.equal(s.keep([v(false, 0.2), v(false, 0.5)]), true);
    assert.equal(s.keep([v(false, 0.5), v(false, 0.5)]), false);
  });

  it("rl.difficultyFilter keeps the pass-rate band and combines with dynamic sampling", () => {
    const cfg = cfgWith({ difficultyFilter: { low: 0.25, high: 0.5 }, dynamicSampling: { maxGenBatches: 2 } });
    const s = new DataSelection(cfg, [ex("a", 0)]);
    assert.equal(s.maxGenBatches, 10, "the larger of the filters' budgets");
    const g = (k: number) => [0, 1, 2, 3].map((i) => v(i < k));
    assert.deepEqual([0, 1, 2, 3, 4].map((k) => s.keep(g(k))), [false, true, true, false, false]);
  });

  it("a procedural curriculum generates prompts at its difficulty, from min upwards, and its state round-trips", () => {
    const cfg = cfgWith({ curriculum: { window: 1, raiseAbove: 0.5, lowerBelow: 0.1 } });
    const s = new DataSelection(cfg, []);
    assert.equal(s.difficulty, getTask("maximum").difficulties.min);
    const cur = { order: [], cursor: 0 };
    const first = s.draw(cur, 3, 0, 0);
    assert.deepEqual(first.map((e) => e.difficulty), [2, 2, 2]);
    assert.equal(first[0]!.prompt.split(",").length, 2);
    const m = s.observe(first, [v(true), v(true), v(false)], 3);
    assert.equal(m["curriculum/difficulty"], 3);
    assert.equal(m["curriculum/moved"], 1);
    assert.deepEqual(s.draw(cur, 2, 1, 0).map((e) => e.difficulty), [3, 3]);
    assert.equal(cur.cursor, 5);
    // Lowering.
    s.observe(first, [v(false), v(false)], 2);
    assert.equal(s.difficulty, 2);
    const saved = s.save();
    assert.equal(saved.sampledTokens, 5);
    const t = new DataSelection(cfg, []);
    t.restore(JSON.parse(JSON.stringify(saved)));
    assert.equal(t.difficulty, 2);
    assert.equal(t.sampledTokens, 5);
    assert.deepEqual(t.draw({ order: [], cursor: 7 }, 2, 2, 0), s.draw({ order: [], cursor: 7 }, 2, 2, 0));
  });

  it("curriculum bounds outside the task's range are config errors naming the field", () => {
    const cfg = cfgWith({ curriculum: { min: 1 } });
    assert.throws(() => new DataSelection(cfg, []), /config error at rl\.curriculum: task maximum has difficulties 2\.\.8/);
    assert.throws(() => cfgWith({ curriculum: { raiseAbove: 0.2, lowerBelow: 0.5 } }), /config error in test\.yaml at rl\.curriculum\.lowerBelow: need lowerBelow < raiseAbove/);
    assert.throws(() => cfgWith({ difficultyFilter: { low: 0.9, high: 0.1 } }), /at rl\.difficultyFilter\.high: need low ≤ high/);
    assert.throws(() => cfgWith({ dynamicSampling: { metric: "shaped" } }), /at rl\.dynamicSampling\.metric/);
    assert.throws(() => cfgWith({ dynamicSampling: { maxGenBatch: 3 } }), /unknown field\(s\) maxGenBatch; did you mean maxGenBatches\?/);
  });

  it("a curriculum over a dataset draws from the largest level ≤ the difficulty", () => {
    const cfg = cfgWith({ curriculum: { window: 1, raiseAbove: 0.5, lowerBelow: 0.1 } }, { train: "unused.jsonl", task: "maximum" });
    const train = [ex("m", 0, 1), ex("m", 1, 1), ex("m", 2, 3), ex("m", 3, 3)];
    const s = new DataSelection(cfg, train);
    assert.equal(s.difficulty, 1);
    const cur = { order: [], cursor: 0 };
    assert.deepEqual(new Set(s.draw(cur, 4, 0, 0).map((e) => e.difficulty)), new Set([1]));
    s.observe([], [v(true)], 1); // → 2: still level 1 (no level-2 examples)
    assert.deepEqual(new Set(s.draw(cur, 2, 1, 0).map((e) => e.difficulty)), new Set([1]));
    s.observe([], [v(true)], 1); // → 3
    assert.deepEqual(new Set(s.draw(cur, 4, 2, 0).map((e) => e.difficulty)), new Set([3]));
    assert.throws(() => new DataSelection(cfg, [ex("m", 0)]), /rl\.curriculum: the training examples carry no difficulty/);
  });

  it("domain sampling draws more from the domain with the lower reward and logs the weights", () => {
    const cfg = cfgWith({ domainSampling: { smoothing: 1, floor: 0.05 } }, { train: "unused.jsonl", task: "maximum" });
    const train = [...Array.from({ length: 20 }, (_, i) => ex("easy", i)), ...Array.from({ length: 20 }, (_, i) => ex("hard", i))];
    const s = new DataSelection(cfg, train);
    const cur = { order: [], cursor: 0 };
    const m = s.observe([ex("easy", 0), ex("easy", 1), ex("hard", 0), ex("hard", 1)], [v(true), v(true), v(false), v(true)], 4);
    assert.equal(m["domain/reward/easy"], 1);
    assert.equal(m["domain/reward/hard"], 0.5);
    assert.ok(Math.abs(m["domain/weight/easy"]! - 0.05) < 1e-12);
    assert.ok(Math.abs(m["domain/weight/hard"]! - 0.95) < 1e-12);
    const drawn = s.draw(cur, 200, 1, 0);
    const hard = drawn.filter((e) => e.task === "hard").length;
    assert.ok(hard > 170 && hard < 200, `hard drawn ${hard}/200`);
    // Every example of a pool is drawn before any repeats.
    assert.equal(new Set(drawn.filter((e) => e.task === "hard").slice(0, 20).map((e) => e.id)).size, 20);
    // Same seed, step and state → same draw.
    const t = new DataSelection(cfg, train);
    t.restore(s.save());
    assert.deepEqual(t.draw(cur, 10, 2, 1), s.draw(cur, 10, 2, 1));
    const tooHigh = cfgWith({ domainSampling: { floor: 0.6 } }, { train: "unused.jsonl", task: "maximum" });
    assert.throws(() => new DataSelection(tooHigh, train), /config error at rl\.domainSampling\.floor/);
  });
});
