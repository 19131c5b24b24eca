/**
 * The torch engine (src/engines/torch + python/rlvr_worker) against the embedded engine on one
 * tiny, randomly initialised Qwen2-architecture checkpoint written here: per-token log-probs and
 * entropy, gradients and one AdamW step, save/load across engines, and the install errors of a
 * missing Python or torch. The worker's own features (micro-batching, sampling, LoRA, bfloat16,
 * a dead worker) and a short GRPO run that must learn are in torch-worker.slow.test.ts.
 *
 * Needs a Python with torch + transformers (`rlvr setup torch`, or $RLVR_PYTHON). Without one
 * every test that needs it is skipped with the reason printed; `npm run test:torch` runs both files.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { hfParamNames } from "../../src/engines/embedded/hf-config.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { INSTALL_HINT } from "../../src/engines/torch/worker.ts";
import type { OptimStep } from "../../src/core/engine.ts";
import { linearLoss, maxAbsDiff, Rng } from "./helpers/tiny.ts";
import { SKIP, quiet, CFG, relDiff, batchOf, useTinyCheckpoint } from "./helpers/torch-fixture.ts";

const fx = useTinyCheckpoint();

describe("torch engine vs embedded engine (same checkpoint)", { skip: SKIP }, () => {
  let emb: EmbeddedEngine;
  let tor: TorchEngine;
  before(async () => {
    emb = await EmbeddedEngine.fromPretrained(fx.ckpt);
    tor = await TorchEngine.fromPretrained(fx.ckpt, { ...quiet, device: "cpu", threads: 1 });
  });
  after(async () => {
    await tor?.close();
    await emb?.close();
  });

  test("info describes the model", () => {
    const i = tor.info();
    assert.equal(i.engine, "torch");
    assert.equal(i.vocabSize, CFG.vocabSize);
    assert.equal(i.maxSeqLen, CFG.maxPositionEmbeddings);
    assert.equal(i.numParams, emb.info().numParams);
    assert.equal(i.dtype, "float32");
    assert.match(i.device, /^cpu/);
  });

  test("(1) per-token log-probs and entropy agree within 1e-4 (policy and reference)", async () => {
    const batch = batchOf(11, [9, 4, 12, 2]);
    const a = await emb.score(batch, { model: "policy", entropy: true });
    const b = await tor.score(batch, { model: "policy", entropy: true });
    assert.ok(maxAbsDiff(a.logprobs, b.logprobs) < 1e-4, `log-prob diff ${maxAbsDiff(a.logprobs, b.logprobs)}`);
    assert.ok(maxAbsDiff(a.entropy!, b.entropy!) < 1e-4, `entropy diff ${maxAbsDiff(a.entropy!, b.entropy!)}`);
    // Layout: position 0 and padding hold 0; real positions are negative log-probs.
    for (let r = 0; r < batch.batchSize; r++) {
      for (let t = 0; t < batch.seqLen; t++) {
        const v = b.logprobs[r * batch.seqLen + t]!;
        if (t === 0 || t >= batch.lengths[r]!) assert.equal(v, 0, `lp[${r},${t}] should be 0`);
        else assert.ok(v < 0, `lp[${r},${t}] = ${v}`);
      }
    }
    assert.equal((await tor.score(batch, { model: "policy" })).entropy, undefined);
    await assert.rejects(tor.score(batch, { model: "reference" }), /before setReference/);
    await tor.setReference("policy");
    await emb.setReference("policy");
    const ra = await emb.score(batch, { model: "reference" });
    const rb = await tor.score(batch, { model: "reference" });
    assert.ok(maxAbsDiff(ra.logprobs, rb.logprobs) < 1e-4);
  });

  test("(2) one forwardBackward + optimStep gives the same gradients, grad norm and updated weights within 1e-4", async () => {
    const batch = batchOf(12, [10, 7, 12]);
    const rng = new Rng(5);
    const n = batch.batchSize * batch.seqLen;
    const c = Float32Array.from({ length: n }, () => rng.normal());
    const e = Float32Array.from({ length: n }, () => 0.5 * rng.normal());
    const { fn } = linearLoss(c, e);
    const ra = await emb.forwardBackward(batch, fn, { entropy: true });
    const rb = await tor.forwardBackward(batch, fn, { entropy: true });
    assert.ok(Math.abs(ra.loss - rb.loss) < 1e-4 * (1 + Math.abs(ra.loss)), `loss ${ra.loss} vs ${rb.loss}`);
    assert.equal(rb.tokens, ra.tokens);
    const names = hfParamNames(CFG).map((s) => s.name);
    for (const name of names) {
      const ga = (await emb.getGrad(name))!;
      const gb = (await tor.getGrad(name))!;
      assert.ok(gb, `torch has no gradient for ${name}`);
      assert.ok(relDiff(gb, ga) < 1e-4, `gradient of ${name}: rel diff ${relDiff(gb, ga)}`);
    }
    // Weight decay on matrices only, and clipping engaged (the norm is far above 0.5).
    const opt: OptimStep = { lr: 1e-3, maxGradNorm: 0.5, weightDecay: 0.1 };
    const sa = await emb.optimStep(opt);
    const sb = await tor.optimStep(opt);
    assert.equal(sb.skipped, false);
    assert.ok(sa.gradNorm > 0.5);
    assert.ok(Math.abs(sa.gradNorm - sb.gradNorm) < 1e-4 * sa.gradNorm, `grad norm ${sa.gradNorm} vs ${sb.gradNorm}`);
    let worst = 0;
    for (const name of names) {
      const d = maxAbsDiff(await tor.getWeight(name), await emb.getWeight(name));
      worst = Math.max(worst, d);
      assert.ok(d < 1e-4, `updated ${name} differs by ${d}`);
    }
    assert.deepEqual(await tor.optimStep(opt), { gradNorm: 0, skipped: true }, "gradients are cleared by the step");
    // And the models still agree after the update.
    const after1 = batchOf(13, [8, 11]);
    const la = await emb.score(after1, { model: "policy" });
    const lb = await tor.score(after1, { model: "policy" });
    assert.ok(maxAbsDiff(la.logprobs, lb.logprobs) < 1e-4, `after the step: ${maxAbsDiff(la.logprobs, lb.logprobs)} (weights ${worst})`);
  });

  test("save → load: the embedded engine reads the torch engine's checkpoint and optimizer state", async () => {
    const dir = join(fx.tmp, "from-torch");
    await tor.save(dir, { optimizer: true });
    const files = await readdir(dir);
    assert.ok(files.includes("config.json") && files.includes("model.safetensors") && files.includes("optimizer.safetensors"), files.join(","));
    const gen = JSON.parse(await readFile(join(dir, "generation_config.json"), "utf8")) as Record<string, unknown>;
    assert.deepEqual([gen.eos_token_id, gen.pad_token_id, gen.max_new_tokens], [5, 5, 7], "the checkpoint keeps the generation config it was loaded with");
    const back = await EmbeddedEngine.fromPretrained(dir);
    const batch = batchOf(14, [6, 12]);
    const a = await back.score(batch, { model: "policy" });
    const b = await tor.score(batch, { model: "policy" });
    assert.ok(maxAbsDiff(a.logprobs, b.logprobs) < 1e-4);
    // The same next step in both (the moments and step count travelled with the checkpoint).
    const { fn } = linearLoss(new Float32Array(batch.batchSize * batch.seqLen).fill(1), new Float32Array(batch.batchSize * batch.seqLen));
    await back.forwardBackward(batch, fn);
    await tor.forwardBackward(batch, fn);
    await back.optimStep({ lr: 1e-3 });
    await tor.optimStep({ lr: 1e-3 });
    for (const name of ["model.embed_tokens.weight", "model.layers.1.mlp.down_proj.weight", "model.layers.0.self_attn.q_proj.bias"]) {
      const d = maxAbsDiff(await tor.getWeight(name), await back.getWeight(name));
      assert.ok(d < 1e-4, `${name} after resuming: ${d}`);
    }
    await back.close();
    // torch reloads its own checkpoint exactly.
    const w0 = await tor.getWeight("model.norm.weight");
    await tor.load(dir);
    assert.ok(maxAbsDiff(await tor.getWeight("model.norm.weight"), w0) > 0, "load replaced the stepped weights");
  });
});

test("a Python without torch: probe and engine creation name the install command", async (t) => {
  const sys = spawnSync("python3", ["-c", "import torch"], { encoding: "utf8" });
  if (sys.error || sys.status === 0) {
    t.skip("python3 on PATH is missing or has torch");
    return;
  }
  const r = TorchEngine.probe("python3");
  assert.ok(!r.ok && r.reason.includes(INSTALL_HINT) && /has no module/.test(r.reason), JSON.stringify(r));
  await assert.rejects(TorchEngine.fromPretrained(fx.ckpt, { python: "python3", ...quiet }), (e: Error) => {
    assert.match(e.message, /no module .*rlvr setup torch/is);
    return true;
  });
});

test("a missing Python fails engine creation with the install command", async () => {
  assert.ok(!TorchEngine.probe("/nonexistent/python3").ok);
  await assert.rejects(TorchEngine.fromPretrained(fx.ckpt, { python: "/nonexistent/python3", ...quiet }), (e: Error) => {
    assert.match(e.message, /rlvr setup torch/);
    return true;
  });
});
