// Tinker's built-in losses (src/algorithms/losses/tinker.ts): golden values computed by hand with
// numpy from the formulas in the Tinker docs (sum reduction, per-position inputs), central finite
// differences for every gradient, and the input checks.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { listTinkerLosses, tinkerLoss, type TinkerLossInputs } from "../../src/algorithms/index.ts";

const lp = [-0.7, -0.3, -2.5, -0.9, -1.7];
const base = {
  weights: [1.0, 0.5, 0.0, 2.0, 1.0],
  logprobs: [-1.0, -0.5, -2.0, -1.5, -1.7],
  advantages: [1.0, -2.0, -0.5, 0.0, 3.0],
};

/** numpy (float64): r = exp(lp − q); see the formulas in tinker.ts. */
const GOLDEN: Record<string, { config?: Record<string, number>; perToken?: boolean; loss: number; elementwise: number[]; grad: number[] }> = {
  cross_entropy: { loss: 4.35, elementwise: [0.7, 0.15, 0.0, 1.8, 1.7], grad: [-1.0, -0.5, 0.0, -2.0, -1.0] },
  importance_sampling: { loss: -1.6037879613993469, elementwise: [-1.3498588075760032, 2.4428055163203397, 0.3032653298563167, 0, -3.0], grad: [-1.3498588075760032, 2.4428055163203397, 0.3032653298563167, 0.0, -3.0] },
  // clip binds at 0 (A > 0, r = 1.35 > 1.2) and 2 (A < 0, r = 0.61 < 0.8): value clipped, gradient 0.
  ppo: { loss: -1.3571944836796601, elementwise: [-1.2, 2.4428055163203397, 0.4, 0, -3.0], grad: [0.0, 2.4428055163203397, 0.0, 0.0, -3.0] },
  // per-token thresholds wide enough at 0 and 2 that nothing binds: equals importance_sampling.
  ppo_per_token: { perToken: true, loss: -1.6037879613993469, elementwise: [-1.3498588075760032, 2.4428055163203397, 0.3032653298563167, 0, -3.0], grad: [-1.3498588075760032, 2.4428055163203397, 0.3032653298563167, 0.0, -3.0] },
  cispo: { loss: 4.22, elementwise: [0.84, -0.72, -1.0, 0.0, 5.1], grad: [-1.2, 2.4, 0.4, 0.0, -3.0] },
  dro: { config: { beta: 0.3 }, loss: 4.061, elementwise: [0.7135, -0.594, -1.2125, 0.054, 5.1], grad: [-0.91, 2.06, 0.35, 0.18, -3.0] },
};

function inputs(name: string, target: number[]): TinkerLossInputs {
  const g = GOLDEN[name]!;
  const x: TinkerLossInputs = { targetLogprobs: Float64Array.from(target), inputs: {}, config: g.config ?? {} };
  if (name === "cross_entropy") x.inputs["weights"] = Float64Array.from(base.weights);
  else {
    x.inputs["logprobs"] = Float64Array.from(base.logprobs);
    x.inputs["advantages"] = Float64Array.from(base.advantages);
  }
  if (g.perToken) {
    x.inputs["clip_low_threshold"] = Float64Array.from([0.9, 0.9, 0.5, 0.9, 0.9]);
    x.inputs["clip_high_threshold"] = Float64Array.from([1.5, 1.1, 1.1, 1.1, 1.1]);
  }
  return x;
}
const lossName = (k: string) => k.replace("_per_token", "");
const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} vs ${b}`);

describe("tinker losses: golden values (sum reduction)", () => {
  it("registers exactly the five built-ins", () => assert.deepEqual(listTinkerLosses(), ["cispo", "cross_entropy", "dro", "importance_sampling", "ppo"]));
  for (const [key, g] of Object.entries(GOLDEN)) {
    it(key, () => {
      const out = tinkerLoss(lossName(key), inputs(key, lp));
      close(out.loss, g.loss);
      g.elementwise.forEach((v, i) => close(out.elementwise[i]!, v));
      g.grad.forEach((v, i) => close(out.grad[i]!, v));
    });
  }
});

describe("tinker losses: gradients match central finite differences", () => {
  // cispo's weight is stop-gradient (sg), so its gradient is not the derivative of its value; its golden gradient is checked above.
  for (const key of Object.keys(GOLDEN).filter((k) => k !== "cispo")) {
    it(key, () => {
      const h = 1e-6;
      const g = tinkerLoss(lossName(key), inputs(key, lp)).grad;
      lp.forEach((_, i) => {
        const up = [...lp];
        const dn = [...lp];
        up[i]! += h;
        dn[i]! -= h;
        const fd = (tinkerLoss(lossName(key), inputs(key, up)).loss - tinkerLoss(lossName(key), inputs(key, dn)).loss) / (2 * h);
        close(g[i]!, fd, 1e-5);
      });
    });
  }
});

describe("tinker losses: input checks", () => {
  it("names a missing input", () => assert.throws(() => tinkerLoss("ppo", { targetLogprobs: Float64Array.from(lp), inputs: { logprobs: Float64Array.from(base.logprobs) }, config: {} }), /loss_fn_inputs\.advantages is required/));
  it("names a length mismatch", () => assert.throws(() => tinkerLoss("cross_entropy", { targetLogprobs: Float64Array.from(lp), inputs: { weights: Float64Array.from([1, 2]) }, config: {} }), /weights has 2 values, target_tokens has 5/));
  it("names an unknown config key", () => assert.throws(() => tinkerLoss("ppo", { ...inputs("ppo", lp), config: { clip_ratio: 0.2 } }), /unknown loss_fn_config key "clip_ratio"/));
  it("dro needs beta", () => assert.throws(() => tinkerLoss("dro", { ...inputs("dro", lp), config: {} }), /beta/));
  it("names the supported losses for an unknown one", () => assert.throws(() => tinkerLoss("gspo", inputs("ppo", lp)), /unknown loss_fn "gspo".*cispo, cross_entropy, dro, importance_sampling, ppo/));
});
