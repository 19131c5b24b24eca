/**
 * The torch worker's scoring path (python/rlvr_worker/scoring.py) against the plain one: the
 * chunked head and the shared-prompt pass give the log-probs, entropies and gradients of
 * `model(ids).logits` → log-softmax on tiny random Llama and Qwen2 models, including rows shorter
 * than the shared prompt and a row that shares nothing; and with `score_from` (the head skipped
 * over prompt positions the loss does not read: forwardBackward's trainedOnly), equal from there
 * on, 0 before. Skipped without the torch environment.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { resolvePython, workerEnv } from "../../src/engines/torch/worker.ts";

const probe = TorchEngine.probe();
const SKIP = probe.ok ? false : `torch scoring tests skipped: ${probe.reason}`;

test("chunked head and shared prompts equal the plain pass (log-probs, entropy, gradients)", { skip: SKIP, timeout: 120_000 }, () => {
  const r = spawnSync(resolvePython(), [join(import.meta.dirname, "helpers", "torch_scoring_parity.py")], { env: workerEnv(), encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { model: string; case: string; lp: number; entropy: number; grad: number; runs: number[] | null; shared: number });
  assert.equal(rows.length, 10);
  assert.deepEqual(rows.map((x) => x.case).slice(0, 5), ["chunked", "shared", "shared-1-chunk", "chunked-from", "shared-from"]);
  for (const x of rows) {
    assert.deepEqual(x.runs, [0, 0, 0, 0, 1, 1, 1, 1, 2], `${x.model}: the plan groups the two prompts and leaves the loner alone`);
    assert.equal(x.shared, 9);
    assert.ok(x.lp < 1e-5 && x.entropy < 1e-5, `${x.model} ${x.case}: log-prob gap ${x.lp}, entropy gap ${x.entropy}`);
    assert.ok(x.grad < 1e-5, `${x.model} ${x.case}: relative gradient gap ${x.grad}`);
  }
});

test("sampling: the shared-prompt prefill and LoRA merged while sampling equal plain generate()", { skip: SKIP, timeout: 120_000 }, () => {
  const r = spawnSync(resolvePython(), [join(import.meta.dirname, "helpers", "torch_sampling_parity.py")], { env: workerEnv(), encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { case: string; rows?: number; same?: number; lp?: number; lengths?: boolean; restored?: boolean; merged?: boolean });
  assert.deepEqual(rows.map((x) => x.case), ["shared-sampled", "shared-greedy", "lora-merged-sampled", "lora-merged-greedy", "lora-restored"]);
  for (const x of rows.slice(0, 4)) {
    assert.equal(x.same, x.rows, `${x.case}: every row's tokens equal`);
    assert.ok(x.lengths, `${x.case}: lengths equal`);
    // Positions derived from the mask matter: without them the gap is ~1e-4..1e-3 (mutation-checked).
    assert.ok(x.lp! < 1e-5, `${x.case}: log-prob gap ${x.lp}`);
  }
  assert.ok(rows[4]!.restored, "the base weights are restored bit for bit after merged sampling");
  assert.equal(rows[4]!.merged, false, "the adapter is unmerged again (training sees the peft model)");
});
