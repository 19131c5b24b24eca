// Checkpoint and resume through the real CLI: a run killed with SIGKILL, a run stopped with
// SIGINT and a run whose newest checkpoints were damaged all resume to exactly the metrics and
// weights of an uninterrupted run with the same seed (bit-identical on the embedded engine).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyCheckpoint } from "../../src/trainer/checkpoints.ts";
import { configYaml, hasCheckpoint, lines, metricsWithoutTiming, rlvr, tinyConfig, waitFor, type Exit } from "./helpers.ts";

const root = mkdtempSync(join(tmpdir(), "rlvr-resume-"));
const cfgPath = join(root, "cfg.yaml");
const A = join(root, "uninterrupted");
const K = join(root, "killed");
const S = join(root, "sigint");
let exits: { a: Exit; k: Exit; s: Exit };

/** Same logs and weights as the uninterrupted run (timing fields aside). */
function assertSameAsUninterrupted(dir: string): void {
  assert.deepEqual(metricsWithoutTiming(dir), metricsWithoutTiming(A), "metrics.jsonl");
  for (const f of ["samples.jsonl", "eval.jsonl"]) assert.equal(readFileSync(join(dir, f), "utf8"), readFileSync(join(A, f), "utf8"), f);
  const model = (d: string, c: string) => readFileSync(join(d, "checkpoints", c, "model.safetensors"));
  assert.ok(model(dir, "final").equals(model(A, "final")), "final weights are bit-identical");
  const opt = (d: string) => readFileSync(join(d, "checkpoints", "step-12", "optimizer.safetensors"));
  assert.ok(opt(dir).equals(opt(A)), "optimizer state at step 12 is bit-identical");
}

before(async () => {
  writeFileSync(cfgPath, configYaml(tinyConfig(join(root, "unused"))));
  const a = rlvr(["train", cfgPath, "--out", A]);
  const k = rlvr(["train", cfgPath, "--out", K]);
  const s = rlvr(["train", cfgPath, "--out", S]);
  const [ea, ek, es] = await Promise.all([
    a.done,
    // Kill one run once its first RL checkpoint (step-8: SFT 6 + RL 2) is on disk.
    waitFor(() => hasCheckpoint(K, 8), k.done, "checkpoint step-8").then(() => {
      k.child.kill("SIGKILL");
      return k.done;
    }),
    // Interrupt the other during its first RL steps.
    waitFor(() => lines(join(S, "metrics.jsonl")).some((l) => l.includes('"stage":"rl"')), s.done, "the first RL step").then(() => {
      s.child.kill("SIGINT");
      return s.done;
    }),
  ]);
  exits = { a: ea, k: ek, s: es };
  assert.equal(ea.code, 0, ea.stderr);
});

after(() => rmSync(root, { recursive: true, force: true }));

describe("resume", () => {
  it("a run killed with SIGKILL mid-run resumes to the uninterrupted run's metrics and weights", async () => {
    assert.equal(exits.k.signal, "SIGKILL");
    assert.ok(!existsSync(join(K, "checkpoints", "final")), "killed before the end");
    const r = await rlvr(["train", cfgPath, "--resume", K]).done;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /» resume \(from step-(8|10|12)/);
    assertSameAsUninterrupted(K);
  });

  it("SIGINT writes a checkpoint at the next step boundary, exits 130 and loses nothing", async () => {
    const e = exits.s;
    assert.equal(e.code, 130, e.stderr);
    const m = /interrupted at (sft|rl) step (\d+); checkpoint (\S+)/.exec(e.stderr);
    assert.ok(m, e.stderr);
    assert.match(e.stderr, /resume with: rlvr train .* --resume /);
    const ckpt = m[3]!;
    assert.equal(verifyCheckpoint(ckpt), null, "the checkpoint is complete");
    const state = JSON.parse(readFileSync(join(ckpt, "trainer.json"), "utf8")) as { step: number; stage: string };
    // Every step that was logged is in the checkpoint, and nothing after it was logged.
    const logged = lines(join(S, "metrics.jsonl")).length;
    assert.equal(state.step, logged);
    assert.equal(`${state.stage} step ${state.step - (state.stage === "rl" ? 6 : 0)}`, `${m[1]} step ${m[2]}`);
    const r = await rlvr(["train", cfgPath, "--resume", S]).done;
    assert.equal(r.code, 0, r.stderr);
    assertSameAsUninterrupted(S);
  });

  it("a damaged newest checkpoint is skipped and the previous complete one is resumed", async () => {
    const C = join(root, "damaged");
    cpSync(A, C, { recursive: true });
    // A second copy resumes from the end of SFT (step-6): the pre-RL evaluation and the first
    // reference model are made again.
    const D = join(root, "end-of-sft");
    cpSync(A, D, { recursive: true });
    for (const s of [8, 10, 12]) rmSync(join(D, "checkpoints", `step-${s}`), { recursive: true });
    const ck = join(C, "checkpoints");
    // step-14: a checkpoint without its manifest (the completion marker).
    cpSync(join(ck, "step-12"), join(ck, "step-14"), { recursive: true });
    rmSync(join(ck, "step-14", "manifest.json"));
    // step-12: a truncated weights file.
    const w = join(ck, "step-12", "model.safetensors");
    truncateSync(w, Math.floor(statSync(w).size / 2));
    // A temporary directory left by a write that never finished.
    mkdirSync(join(ck, ".tmp-step-16-99999"));
    writeFileSync(join(ck, ".tmp-step-16-99999", "model.safetensors"), "partial");
    // Drop the end-of-run files so the comparison shows they were written again.
    rmSync(join(ck, "final"), { recursive: true });
    const [r, rd] = await Promise.all([rlvr(["train", cfgPath, "--resume", C]).done, rlvr(["train", cfgPath, "--resume", D]).done]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /from step-10; skipped step-14: missing manifest\.json.*; skipped step-12: model\.safetensors has \d+ bytes, the manifest says \d+/);
    assertSameAsUninterrupted(C);
    assert.deepEqual(readdirSync(ck).sort(), ["final", "latest", "reference", "step-10", "step-12", "step-6", "step-8"]);
    assert.equal(rd.code, 0, rd.stderr);
    assert.match(rd.stderr, /» resume \(from step-6\)\n» setup\n» eval \(before RL\)\n» rl \(6 steps\)/);
    assertSameAsUninterrupted(D);
    assert.equal(verifyCheckpoint(join(ck, "step-12")), null, "step-12 was written again, complete");
    assert.equal(readFileSync(join(ck, "latest"), "utf8"), "step-12\n");
  });

  it("refuses a changed config and a fresh run over existing checkpoints, naming the fix", async () => {
    const changed = join(root, "changed.yaml");
    writeFileSync(changed, configYaml(tinyConfig(join(root, "unused"), { seed: 4 })));
    // One after the other: run together, the second would meet the first's run-directory lock
    // (that race is test/trainer/lock.slow.test.ts's).
    const r1 = await rlvr(["train", changed, "--resume", A]).done;
    const r2 = await rlvr(["train", cfgPath, "--out", A]).done;
    assert.equal(r1.code, 1);
    assert.match(r1.stderr, /resume error: the config differs from the one that wrote .*step-12 at seed \(3 → 4\); resume with the run's own config/);
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /^error: run directory .* already holds a run \(config\.yaml, metrics\.jsonl, samples\.jsonl, eval\.jsonl, report\.md, checkpoints\/\); continue it with --resume .*, or pass --overwrite/);
    assert.equal(r2.stderr.trim().split("\n").length, 1, r2.stderr);
  });
});
