/**
 * A torch worker that dies mid-call (SIGKILL during forwardBackward, injected with
 * RLVR_WORKER_KILL_AT=forward:4, python/rlvr_worker/__main__.py) stops `rlvr train` with one line
 * naming the worker, the call and the step, and the checkpoint of the last completed step;
 * `--resume` from it ends with the uninterrupted run's metrics and bit-identical final weights
 * (the resume tests of test/trainer/resume.test.ts, on the torch engine and this fault). No
 * process of the worker's group is left running.
 *
 * Needs python/.venv (`rlvr setup torch`); skipped with the reason printed otherwise. ~40 s.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { tinyQwen2 } from "../engines/helpers/tiny.ts";
import { groupMembers } from "./helpers.ts";
import { configYaml, metricsWithoutTiming, rlvr, tinyConfig, type Exit } from "../trainer/helpers.ts";

const probe = TorchEngine.probe();
const SKIP = probe.ok ? false : `torch worker fault tests skipped: ${probe.reason}`;
if (SKIP) console.log(`# ${SKIP}`);

/** cpu here; bench/gpu.sh sets RLVR_TEST_DEVICE=cuda. */
const DEVICE = process.env.RLVR_TEST_DEVICE ?? "cpu";
const tinyModel = tinyQwen2({ vocabSize: 16, hiddenSize: 16, intermediateSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 1, headDim: 8, maxPositionEmbeddings: 16 });

describe("torch worker killed during forwardBackward", { skip: SKIP }, () => {
  const root = mkdtempSync(join(tmpdir(), "rlvr-worker-fault-"));
  const A = join(root, "uninterrupted");
  const K = join(root, "killed");
  const cfgPath = join(root, "cfg.yaml");
  const env = { RLVR_FROM_SOURCE: "1", RLVR_ENGINE_PROBE: "off" };
  let a: Exit;
  let k: Exit;

  before(async () => {
    const cfg = tinyConfig(join(root, "unused"), {
      sft: undefined,
      model: { engine: "torch", device: DEVICE, init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
      checkpoint: { every: 1, keepLast: 3 },
    });
    writeFileSync(cfgPath, configYaml(cfg));
    [a, k] = await Promise.all([rlvr(["train", cfgPath, "--out", A], env).done, rlvr(["train", cfgPath, "--out", K], { ...env, RLVR_WORKER_KILL_AT: "forward:4" }).done]);
    assert.equal(a.code, 0, a.stderr);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("stops with one line naming the worker, the call, the step and the checkpoint of the last completed step; nothing is left running", () => {
    assert.equal(k.code, 1, k.stderr);
    const last = k.stderr.trim().split("\n").at(-1)!;
    const m = /^error: torch worker \(pid (\d+)\): forward failed: the worker exited \(signal SIGKILL\) at rl step (\d+); the newest complete checkpoint is (\S+) \(rlvr train --resume (\S+) continues from it\)$/.exec(last);
    assert.ok(m, last);
    const [, pid, step, ckpt, dir] = m;
    assert.equal(ckpt, join(K, "checkpoints", `step-${Number(step) - 1}`), "the checkpoint of the last completed step");
    assert.equal(dir, K);
    assert.deepEqual(groupMembers(Number(pid)), [], "no process of the worker's group is left");
  });

  it("--resume continues to the uninterrupted run's metrics and bit-identical final weights", async () => {
    const r = await rlvr(["train", cfgPath, "--resume", K], env).done;
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(metricsWithoutTiming(K), metricsWithoutTiming(A), "metrics.jsonl");
    const model = (d: string) => readFileSync(join(d, "checkpoints", "final", "model.safetensors"));
    assert.ok(model(K).equals(model(A)), "final weights are bit-identical");
  });
});

describe("torch worker that hangs (SIGSTOP)", { skip: SKIP }, () => {
  it("a call past model.callTimeoutS is one line naming the worker, the call, the seconds and the field; the worker is killed", async () => {
    const engine = await TorchEngine.create(tinyModel, { device: DEVICE, threads: 1, timeouts: { call: 2 }, onStderr: () => undefined });
    const pid = engine.workerPid!;
    try {
      const batch = { batchSize: 1, seqLen: 3, tokens: Int32Array.from([1, 2, 3]), lengths: Int32Array.from([3]), lossMask: Float32Array.from([0, 1, 1]) };
      await engine.score(batch, { model: "policy" });
      process.kill(pid, "SIGSTOP");
      const t0 = performance.now();
      const err = await engine.score(batch, { model: "policy" }).then(() => null, (e: Error) => e);
      assert.ok(err && err.name === "PeerError", String(err));
      assert.equal(err.message, `torch worker (pid ${pid}): score did not answer within 2 s (model.callTimeoutS)`);
      assert.ok(performance.now() - t0 < 5000);
      assert.equal(engine.alive, false);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(groupMembers(pid).filter((l) => !l.includes("<defunct>")), [], "the stopped worker was killed");
    } finally {
      await engine.close();
    }
  });
});
