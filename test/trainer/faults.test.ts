// Non-finite losses: the update is skipped (its gradients dropped), the step is logged with
// skipped: 1, and the run stops with a clear message after faults.maxConsecutiveSkips in a row.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { registerPolicyLoss, type PolicyLossContext, type PolicyLossTerms } from "../../src/algorithms/index.ts";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import type { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { RunLogger } from "../../src/pipeline/logger.ts";
import { initRlState } from "../../src/pipeline/state.ts";
import { rlStep } from "../../src/pipeline/step.ts";
import { NonFiniteError, train } from "../../src/trainer/run.ts";
import { metricsWithoutTiming, tinyConfig } from "./helpers.ts";

// A policy loss that returns NaN on the calls `nanOn` picks (otherwise REINFORCE with the
// advantage shifted by 0.1, so that even all-zero advantages give a gradient).
let calls = 0;
let nanOn: (call: number) => boolean = () => false;
/** NaN in the gradient (cotangent) only, with a finite loss. */
let nanGradOnly = false;
function nanLoss(c: PolicyLossContext): PolicyLossTerms {
  const n = c.batchSize * c.seqLen;
  const out = { loss: new Float64Array(n), grad: new Float64Array(n) };
  for (let i = 0; i < n; i++) {
    if (!(c.mask[i]! > 0)) continue;
    out.loss[i] = -(c.advantages[i]! + 0.1) * c.logprobs[i]!;
    out.grad[i] = -(c.advantages[i]! + 0.1);
  }
  if (nanOn(calls++)) (nanGradOnly ? out.grad : out.loss).fill(Number.NaN);
  return out;
}
registerPolicyLoss("test_nan", nanLoss);

const root = mkdtempSync(join(tmpdir(), "rlvr-faults-"));
after(() => rmSync(root, { recursive: true, force: true }));

function config(name: string, rl: Record<string, unknown>, over: Partial<RunConfigInput> = {}) {
  const base = tinyConfig(join(root, name));
  const { sft: _sft, ...rest } = base;
  return parseRunConfig({
    ...rest,
    rl: { steps: 6, promptsPerStep: 4, groupSize: 4, maxNewTokens: 3, lr: 0.01, algorithm: { advantage: { name: "grpo" }, loss: { name: "test_nan" } }, ...rl },
    eval: { every: 0 },
    checkpoint: { every: 0 },
    ...over,
  });
}

describe("non-finite loss", () => {
  it("one NaN micro-batch skips the whole update and drops the gradients of the others", async () => {
    const cfg = config("micro", { microBatchSize: 8 }); // 16 responses → 2 micro-batches
    const ctx = await buildContext(cfg);
    const engine = ctx.engine as EmbeddedEngine;
    const before = await engine.getWeight("model.embed_tokens.weight");
    calls = 0;
    nanOn = (c) => c === 1; // the second micro-batch of the first step
    const st = initRlState(ctx, cfg.algorithm!);
    const m = await rlStep(ctx, cfg.algorithm!, st, new RunLogger(join(root, "micro"), true));
    assert.equal(calls, 2);
    assert.equal(m["skipped"], 1);
    assert.ok(Number.isNaN(m["grad_norm"]!));
    assert.equal(await engine.getGrad("model.embed_tokens.weight"), null, "gradients of micro-batch 1 were dropped");
    assert.deepEqual(await engine.getWeight("model.embed_tokens.weight"), before, "no update was applied");
    nanOn = () => false;
    const m2 = await rlStep(ctx, cfg.algorithm!, st, new RunLogger(join(root, "micro"), true));
    assert.equal(m2["skipped"], 0);
    assert.ok(Number.isFinite(m2["grad_norm"]!) && m2["grad_norm"]! > 0);
    assert.notDeepEqual(await engine.getWeight("model.embed_tokens.weight"), before, "the next finite step updates");
    await engine.close();
  });

  it("a finite loss with a non-finite gradient skips the update too", async () => {
    const cfg = config("grad", {});
    const ctx = await buildContext(cfg);
    const engine = ctx.engine as EmbeddedEngine;
    const before = await engine.getWeight("model.embed_tokens.weight");
    calls = 0;
    nanOn = () => true;
    nanGradOnly = true;
    const m = await rlStep(ctx, cfg.algorithm!, initRlState(ctx, cfg.algorithm!), new RunLogger(join(root, "grad"), true));
    nanGradOnly = false;
    assert.ok(Number.isFinite(m["loss/policy"]!));
    assert.equal(m["skipped"], 1);
    assert.ok(Number.isNaN(m["grad_norm"]!));
    assert.deepEqual(await engine.getWeight("model.embed_tokens.weight"), before);
    await engine.close();
  });

  it("stops the run after faults.maxConsecutiveSkips skipped steps in a row, naming the step, the limit and the fix", async () => {
    calls = 0;
    nanOn = () => true;
    const dir = join(root, "stop");
    const cfg = config("stop", { steps: 10 }, { faults: { maxConsecutiveSkips: 3 }, checkpoint: { every: 1 } });
    await assert.rejects(train(cfg, { quiet: true }), (e: Error) => {
      assert.ok(e instanceof NonFiniteError);
      assert.equal(
        e.message,
        "training stopped at rl step 3: 3 steps in a row were skipped because the loss or the gradient was not finite (last step: loss NaN, grad_norm NaN); " +
          "no update was applied for them. Lower rl.lr or the gradient clip (maxGradNorm), check custom losses and rewards for NaN/Infinity, " +
          `then resume from ${join(dir, "checkpoints", "step-2")}. The limit is faults.maxConsecutiveSkips (3).`,
      );
      return true;
    });
    const rl = metricsWithoutTiming(dir).filter((r) => r["stage"] === "rl");
    assert.deepEqual(rl.map((r) => [r["step"], r["skipped"], r["loss/policy"], r["grad_norm"]]), [1, 2, 3].map((s) => [s, 1, null, null]));
  });

  it("skips below the limit are logged and the run goes on", async () => {
    calls = 0;
    nanOn = (c) => [0, 1, 3, 4].includes(c); // steps 1, 2, 4, 5
    const dir = join(root, "recover");
    await train(config("recover", {}, { faults: { maxConsecutiveSkips: 3 } }), { quiet: true });
    const rl = metricsWithoutTiming(dir).filter((r) => r["stage"] === "rl");
    assert.deepEqual(rl.map((r) => r["skipped"]), [1, 1, 0, 1, 1, 0]);
  });
});
