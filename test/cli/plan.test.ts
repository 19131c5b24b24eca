// `rlvr plan <config>`: the memory plan as a table (exit 0), or the refusal in one line naming the field (exit 1).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

function plan(yaml: string): { status: number | null; stdout: string; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-plan-cli-"));
  try {
    writeFileSync(join(dir, "run.yaml"), yaml);
    return spawnSync(process.execPath, [join(import.meta.dirname, "../../bin/rlvr.js"), "plan", join(dir, "run.yaml")], { encoding: "utf8", env: { ...process.env, RLVR_FROM_SOURCE: "1", RLVR_ENGINE_PROBE: "off" } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const base = ["model: {engine: torch, device: cpu, init: {hiddenSize: 64, numLayers: 2, numHeads: 2}}", 'tokenizer: {type: char, alphabet: "0123456789+="}', "data: {task: addition}", "rl: {steps: 1}"];

test("rlvr plan prints each process's parts and the host total", () => {
  const r = plan(base.join("\n"));
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^device\s+process\s+part\s+bytes\s+field/);
  for (const part of ["parameters", "gradients", "optimizer", "activations"]) assert.match(r.stdout, new RegExp(`host\\s+torch worker\\s+${part}\\s`));
  assert.match(r.stdout, /\nhost: [\d.]+ [KMG]iB of [\d.]+ GiB\n$/);
});

test("rlvr plan refuses a plan that cannot fit, in one line naming the field", () => {
  const r = plan([...base, "rollout: {engine: vllm, kvCacheGiB: 100000}"].join("\n"));
  assert.equal(r.status, 1);
  assert.match(r.stdout, /DOES NOT FIT/);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  assert.match(r.stderr, /^config error in .*run\.yaml at rollout\.kvCacheGiB: the memory plan needs [\d.]+ [GT]iB on host, more than its/);
});
