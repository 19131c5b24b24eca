// `rlvr plan` against measured peaks on this machine: each config trains 2 RL steps in a child
// process (test/helpers/peak-memory.ts) whose peak resident set (rlvr) and its torch worker's
// VmHWM (with colocated vLLM inside) must be within 25% of the plan's per-process total. The
// shapes differ from the ones the plan's runtimes and coefficients were measured on
// (src/trainer/plan.ts), so this checks the formulas, not the fit.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { planMemory, type TrainConfig } from "../../src/api/train.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { processPeaks } from "../../src/trainer/plan.ts";
import { resolveVllmPython } from "../../src/rollout/samplers/vllm-server.ts";

const TOLERANCE = 0.25;
const torchReady = TorchEngine.probe();
const vllmPython = resolveVllmPython();

/** A char model over digits plus `extra` CJK characters (a vocabulary large enough for the logits terms to count). */
function config(out: string, o: { engine: "embedded" | "torch"; extra: number; hidden: number; layers: number; heads: number; prompts: number; group: number; newTokens: number; over?: Record<string, unknown> }): Record<string, unknown> {
  const alphabet = "0123456789+=" + Array.from({ length: o.extra }, (_, i) => String.fromCodePoint(0x4e00 + i)).join("");
  return {
    seed: 2,
    out,
    model: { engine: o.engine, ...(o.engine === "torch" ? { device: "cpu" } : {}), init: { hiddenSize: o.hidden, numLayers: o.layers, numHeads: o.heads, maxPositionEmbeddings: 32 } },
    tokenizer: { type: "char", alphabet },
    data: { task: "addition", difficulty: 2, trainSize: 200, testSize: 8 },
    rl: { steps: 2, promptsPerStep: o.prompts, groupSize: o.group, maxNewTokens: o.newTokens },
    eval: { n: 8 },
    ...o.over,
  };
}

/** Train `cfg` in a child process; its peaks in bytes. */
function measure(cfg: Record<string, unknown>, dir: string): { rlvr: number; worker: number } {
  const file = join(dir, "config.json");
  writeFileSync(file, JSON.stringify(cfg));
  const r = spawnSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "../helpers/peak-memory.ts"), file], { cwd: join(import.meta.dirname, "../.."), encoding: "utf8", env: { ...process.env, RLVR_ENGINE_PROBE: "off" }, timeout: 600_000 });
  assert.equal(r.status, 0, r.stderr);
  const last = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { self: number; workers: number };
  return { rlvr: last.self, worker: last.workers };
}

async function check(name: string, cfg: Record<string, unknown>, dir: string): Promise<void> {
  const plan = await planMemory(cfg as TrainConfig);
  assert.ok(plan, "a plan");
  const want = processPeaks(plan);
  const got = measure(cfg, dir);
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  const pairs: [string, number, number][] = [["rlvr", want["rlvr"]!, got.rlvr]];
  if (want["torch worker"] !== undefined) pairs.push(["torch worker", want["torch worker"], got.worker]);
  for (const [proc, planned, measured] of pairs) {
    console.log(`# ${name}: ${proc} planned ${mib(planned)}, measured ${mib(measured)} (${((planned / measured - 1) * 100).toFixed(0)}%)`);
    assert.ok(Math.abs(planned / measured - 1) <= TOLERANCE, `${name}: ${proc} planned ${mib(planned)}, measured ${mib(measured)}`);
  }
}

describe("memory plan vs measured peaks", () => {
  const withDir = (fn: (dir: string) => Promise<void>) => async () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-plan-"));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  test("embedded engine", { timeout: 600_000 }, withDir((dir) => check("embedded", config(join(dir, "run"), { engine: "embedded", extra: 1000, hidden: 96, layers: 4, heads: 2, prompts: 16, group: 8, newTokens: 8 }), dir)));
  test("torch engine (micro-batched by model.tokenBudget)", { timeout: 600_000, skip: torchReady.ok ? false : torchReady.reason }, withDir((dir) =>
    check("torch", config(join(dir, "run"), { engine: "torch", extra: 3000, hidden: 192, layers: 3, heads: 3, prompts: 64, group: 8, newTokens: 8, over: {} }), dir).then(() =>
      check("torch, tokenBudget 2048", merge(config(join(dir, "run2"), { engine: "torch", extra: 3000, hidden: 192, layers: 3, heads: 3, prompts: 64, group: 8, newTokens: 8 }), { tokenBudget: 2048 }), dir))));
  test("colocated vLLM (inside the torch worker)", { timeout: 600_000, skip: !torchReady.ok || !vllmPython ? "torch engine or vLLM not set up" : false }, withDir((dir) =>
    check("colocated vLLM", { ...config(join(dir, "run"), { engine: "torch", extra: 2000, hidden: 128, layers: 2, heads: 2, prompts: 16, group: 8, newTokens: 6 }), rollout: { engine: "vllm", mode: "colocated", kvCacheGiB: 1 } }, dir)));
});

/** `cfg` with `model` fields added. */
function merge(cfg: Record<string, unknown>, model: Record<string, unknown>): Record<string, unknown> {
  return { ...cfg, model: { ...(cfg["model"] as Record<string, unknown>), ...model } };
}
