// The algorithm config: defaults, presets, overrides, and errors that name the field.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AlgorithmConfigError, PRESETS, listPresets, resolveAlgorithm } from "../../src/algorithms/index.ts";

describe("config: defaults and presets", () => {
  it("an empty config is GRPO advantages + PPO clip 0.2 + token-mean, no KL, no entropy", () => {
    const c = resolveAlgorithm({});
    assert.equal(c.advantage.name, "grpo");
    assert.equal(c.advantage["eps"], 1e-6);
    assert.equal(c.advantage["std"], "unbiased");
    assert.deepEqual([c.loss.name, c.loss.clipLow, c.loss.clipHigh], ["ppo_clip", 0.2, 0.2]);
    assert.equal(c.aggregation, "token-mean");
    assert.deepEqual(c.kl, { coef: 0, estimator: "k3", placement: "loss" });
    assert.deepEqual(c.entropy, { coef: 0 });
    assert.equal("dynamicSampling" in c, false, "dynamic sampling lives in rl.dynamicSampling");
    assert.equal(c.mismatch, undefined);
  });
  it("every preset resolves", () => {
    assert.deepEqual(listPresets().sort(), ["cispo", "dapo", "dr_grpo", "grpo", "gspo", "reinforce_pp", "rloo", "sapo"]);
    for (const name of listPresets()) {
      const c = resolveAlgorithm(name);
      assert.equal(c.preset, name);
      assert.ok(PRESETS[name]!.description.length > 20);
    }
  });
  it("dapo: clip-higher 0.2/0.28, token-mean, overlong; dynamic sampling comes as the preset's rl.dynamicSampling", () => {
    const c = resolveAlgorithm("dapo");
    assert.deepEqual([c.loss.clipLow, c.loss.clipHigh], [0.2, 0.28]);
    assert.equal(c.aggregation, "token-mean");
    assert.deepEqual(PRESETS["dapo"]!.rl, { dynamicSampling: {} });
    assert.deepEqual(c.overlong, { enabled: true, bufferFraction: 0.2, factor: 1 });
    assert.equal(c.kl.coef, 0);
  });
  it("gspo / dr_grpo / rloo / reinforce_pp bundles", () => {
    const g = resolveAlgorithm("gspo");
    assert.deepEqual([g.loss.name, g.loss.clipLow, g.loss.clipHigh, g.aggregation], ["gspo", 3e-4, 4e-4, "seq-mean-token-mean"]);
    assert.equal(resolveAlgorithm("dr_grpo").aggregation, "seq-mean-token-sum-norm");
    assert.deepEqual(resolveAlgorithm("rloo").kl, { coef: 0.05, estimator: "k1", placement: "reward" });
    assert.equal(resolveAlgorithm("reinforce_pp").advantage.name, "reinforce_pp");
  });
  it("a loss named without clip values gets that loss's defaults", () => {
    assert.deepEqual([resolveAlgorithm({ loss: { name: "gspo" } }).loss.clipLow, resolveAlgorithm({ loss: { name: "gmpo" } }).loss.clipHigh], [3e-4, 0.4]);
    const s = resolveAlgorithm({ loss: { name: "sapo" } }).loss;
    assert.deepEqual([s["tauPos"], s["tauNeg"]], [1.0, 1.05]);
  });
  it("presets are overridden field by field; a different loss replaces the preset's loss block", () => {
    const c = resolveAlgorithm({ preset: "dapo", loss: { clipHigh: 0.3 }, kl: { coef: 0.01 } });
    assert.deepEqual([c.loss.name, c.loss.clipLow, c.loss.clipHigh], ["ppo_clip", 0.2, 0.3]);
    assert.equal(c.kl.coef, 0.01);
    assert.equal(c.kl.estimator, "k3");
    const d = resolveAlgorithm({ preset: "dapo", loss: { name: "gspo" } });
    assert.deepEqual([d.loss.clipLow, d.loss.clipHigh], [3e-4, 4e-4]);
  });
  it("dynamicSampling in the algorithm block is an error saying it moved to rl.dynamicSampling", () => {
    // `false` (the old default written out in older run directories' config.yaml) loads: off either way.
    assert.equal("dynamicSampling" in resolveAlgorithm({ preset: "grpo", dynamicSampling: false } as never), false);
    for (const input of [{ preset: "grpo", dynamicSampling: true }, { dynamicSampling: {} }]) {
      assert.throws(() => resolveAlgorithm(input as never, { path: "rl.algorithm" }), /^AlgorithmConfigError: config error at rl\.algorithm\.dynamicSampling: dynamic sampling moved to rl\.dynamicSampling, beside the other data-selection blocks; remove it here and set rl\.dynamicSampling: \{\}/);
    }
  });
  it("resolving twice is stable", () => {
    const c = resolveAlgorithm("grpo");
    assert.deepEqual(resolveAlgorithm(c), c);
  });
});

describe("config: errors name the field", () => {
  const cases: [unknown, RegExp][] = [
    [{ loss: { clipHigh: -1 } }, /config error at algorithm\.loss\.clipHigh: .*got -1/],
    [{ loss: { clipHigh: "0.28x" } }, /algorithm\.loss\.clipHigh: .*expected number.*got "0\.28x"/],
    [{ loss: { name: "ppo_clipp" } }, /algorithm\.loss\.name: unknown policy loss "ppo_clipp"; registered: .*ppo_clip/],
    [{ advantage: { name: "grpoo" } }, /algorithm\.advantage\.name: unknown advantage estimator "grpoo"/],
    [{ advantage: { name: "grpo", std: "sample" } }, /algorithm\.advantage\.std/],
    [{ aggregation: "mean" }, /algorithm\.aggregation: .*token-mean/],
    [{ kl: { estimator: "k4" } }, /algorithm\.kl\.estimator/],
    [{ kl: { coef: 0.1, placment: "loss" } }, /config error at algorithm\.kl\.placment: unknown field/],
    [{ klCoef: 0.1 }, /config error at algorithm\.klCoef: unknown field/],
    [{ loss: { name: "sapo", tauNeg: 0 } }, /algorithm\.loss\.tauNeg/],
    [{ loss: { name: "bapo", lowStart: 0.95 } }, /algorithm\.loss\.lowMax: need lowStart ≤ lowMax/],
    [{ mismatch: { mode: "clip" } }, /algorithm\.mismatch\.mode/],
    [{ loss: { dualClip: 0.5 } }, /algorithm\.loss\.dualClip/],
    [{ preset: "ppo" }, /algorithm\.preset: unknown preset "ppo"; expected one of .*dapo/],
  ];
  for (const [input, re] of cases) {
    it(JSON.stringify(input), () => {
      assert.throws(() => resolveAlgorithm(input as never), (e: unknown) => {
        assert.ok(e instanceof AlgorithmConfigError);
        assert.match(e.message, re);
        return true;
      });
    });
  }
  it("the path prefix is configurable", () => {
    assert.throws(() => resolveAlgorithm({ loss: { clipLow: 2 } }, { path: "rl.algorithm" }), /config error at rl\.algorithm\.loss\.clipLow/);
  });
});
