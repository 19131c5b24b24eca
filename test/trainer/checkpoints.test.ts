// The checkpoint directory on its own (no model): atomic writes, verification against the
// manifest, fallback past damaged checkpoints, pruning, and cutting logs back on resume.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findLatestCheckpoint, pruneCheckpoints, publishDir, tempDirFor, verifyCheckpoint, writeCheckpoint } from "../../src/trainer/checkpoints.ts";
import { configChanges, truncateLogs, ResumeError } from "../../src/trainer/resume.ts";

function runDir(): string {
  return mkdtempSync(join(tmpdir(), "rlvr-ckpt-"));
}

/** A fake checkpoint: a weights file of `n` bytes and a state file. */
async function fake(dir: string, step: number, keepLast = 10): Promise<string> {
  return writeCheckpoint(dir, step, keepLast, async (tmp) => {
    writeFileSync(join(tmp, "model.safetensors"), Buffer.alloc(1000 + step, step));
    mkdirSync(join(tmp, "reference"));
    writeFileSync(join(tmp, "reference", "model.safetensors"), "ref");
    writeFileSync(join(tmp, "trainer.json"), JSON.stringify({ step }));
  });
}

describe("checkpoint directory", () => {
  it("writes step-N with a manifest of every file, and a latest marker", async () => {
    const d = runDir();
    const c = await fake(d, 3);
    assert.equal(c, join(d, "checkpoints", "step-3"));
    const m = JSON.parse(readFileSync(join(c, "manifest.json"), "utf8"));
    assert.deepEqual(Object.keys(m.files).sort(), ["model.safetensors", "reference/model.safetensors", "trainer.json"]);
    assert.equal(m.files["model.safetensors"].bytes, 1003);
    assert.equal(verifyCheckpoint(c), null);
    assert.equal(readFileSync(join(d, "checkpoints", "latest"), "utf8"), "step-3\n");
    assert.deepEqual(readdirSync(join(d, "checkpoints")).sort(), ["latest", "step-3"], "no temporary directory left");
    rmSync(d, { recursive: true });
  });

  it("a write that dies before the manifest leaves only a temporary directory, which resume ignores", async () => {
    const d = runDir();
    await fake(d, 2);
    await assert.rejects(
      writeCheckpoint(d, 4, 10, async (tmp) => {
        writeFileSync(join(tmp, "model.safetensors"), "half");
        throw new Error("killed");
      }),
      /killed/,
    );
    assert.ok(!existsSync(join(d, "checkpoints", "step-4")));
    assert.equal(findLatestCheckpoint(d).latest?.name, "step-2");
    rmSync(d, { recursive: true });
  });

  it("finds each kind of damage and falls back to the newest complete checkpoint", async () => {
    const d = runDir();
    for (const s of [1, 2, 3, 4, 5, 6]) await fake(d, s);
    const ck = (s: number) => join(d, "checkpoints", `step-${s}`);
    rmSync(join(ck(6), "manifest.json")); // the completion marker is missing
    truncateSync(join(ck(5), "model.safetensors"), 10); // a truncated file
    const f = join(ck(4), "trainer.json"); // same size, different bytes
    writeFileSync(f, readFileSync(f, "utf8").replace("4", "9"));
    rmSync(join(ck(3), "reference", "model.safetensors")); // a missing file
    writeFileSync(join(ck(2), "manifest.json"), "{"); // an unreadable manifest
    mkdirSync(join(d, "checkpoints", ".tmp-step-7-1"));
    const { latest, skipped } = findLatestCheckpoint(d);
    assert.equal(latest?.name, "step-1");
    assert.deepEqual(
      skipped.map((c) => `${c.name}: ${c.problem}`),
      [
        "step-6: missing manifest.json (the write did not finish)",
        "step-5: model.safetensors has 10 bytes, the manifest says 1005",
        "step-4: trainer.json does not match its SHA-256 in the manifest",
        "step-3: missing reference/model.safetensors",
        `step-2: unreadable manifest.json (${(() => { try { JSON.parse("{"); } catch (e) { return (e as Error).message; } })()})`,
      ],
    );
    rmSync(d, { recursive: true });
  });

  it("keeps the newest keepLast complete checkpoints and removes leftovers", async () => {
    const d = runDir();
    for (const s of [2, 4, 6]) await fake(d, s);
    rmSync(join(d, "checkpoints", "step-2", "manifest.json")); // an old incomplete one
    mkdirSync(join(d, "checkpoints", ".tmp-step-9-123"));
    await fake(d, 8, 2);
    assert.deepEqual(readdirSync(join(d, "checkpoints")).sort(), ["latest", "step-6", "step-8"]);
    pruneCheckpoints(d, 1);
    assert.deepEqual(readdirSync(join(d, "checkpoints")).sort(), ["latest", "step-8"]);
    rmSync(d, { recursive: true });
  });

  it("publishDir replaces an existing directory", () => {
    const d = runDir();
    const final = join(d, "final");
    mkdirSync(final);
    writeFileSync(join(final, "old"), "1");
    const tmp = tempDirFor(final);
    writeFileSync(join(tmp, "new"), "2");
    publishDir(tmp, final);
    assert.deepEqual(readdirSync(d), ["final"]);
    assert.deepEqual(readdirSync(final), ["new"]);
    rmSync(d, { recursive: true });
  });
});

describe("resume helpers", () => {
  it("cuts logs back to their size at the checkpoint, and refuses logs that shrank", () => {
    const d = runDir();
    writeFileSync(join(d, "metrics.jsonl"), "a\nb\nc\n");
    writeFileSync(join(d, "samples.jsonl"), "s\n");
    truncateLogs(d, { "metrics.jsonl": 4, "samples.jsonl": 0, "eval.jsonl": 0 });
    assert.equal(readFileSync(join(d, "metrics.jsonl"), "utf8"), "a\nb\n");
    assert.equal(readFileSync(join(d, "samples.jsonl"), "utf8"), "");
    assert.throws(() => truncateLogs(d, { "metrics.jsonl": 40 }), (e: Error) => e instanceof ResumeError && /has 4 bytes but had 40/.test(e.message));
    rmSync(d, { recursive: true });
  });

  it("lists config changes by path", () => {
    const changes = configChanges({ seed: 1, rl: { lr: 1, steps: 2 }, out: "a" }, { seed: 1, rl: { lr: 2, steps: 2 }, out: "b", faults: { k: 5 } });
    assert.deepEqual(
      changes.map((c) => c.text),
      ["faults.k (unset → 5)", 'out ("a" → "b")', "rl.lr (1 → 2)"],
    );
  });
});
