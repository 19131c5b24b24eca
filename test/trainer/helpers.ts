// Shared pieces of the trainer tests: a tiny, quickly learnable run config, a driver for the
// `rlvr train` process, and metrics without their timing fields.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import type { RunConfigInput } from "../../src/config/schema.ts";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * 1-digit addition, a 16-wide 1-layer model: 6 SFT steps, then 6 GRPO steps with an adaptive KL
 * penalty in the loss, an adaptive entropy bonus and a reference reset every 3 steps, so a
 * checkpoint must carry the optimizer, the reference model and both controllers. Checkpoints
 * every 2 steps of each stage: step-2, -4, -6 (SFT), step-8, -10, -12 (RL steps 2, 4, 6); the
 * newest 4 are kept.
 */
export function tinyConfig(out: string, over: Partial<RunConfigInput> = {}): RunConfigInput {
  return {
    seed: 3,
    out,
    model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
    tokenizer: { type: "char", alphabet: "0123456789+=" },
    data: { task: "addition", difficulty: 1, trainSize: 64, testSize: 8 },
    sft: { steps: 6, batchSize: 32, lr: 0.05, schedule: "constant" },
    rl: {
      steps: 6,
      promptsPerStep: 4,
      groupSize: 4,
      maxNewTokens: 3,
      lr: 0.001,
      algorithm: {
        advantage: { name: "grpo" },
        loss: { name: "ppo_clip" },
        kl: { coef: 0.01, estimator: "k3", placement: "loss", adaptive: { target: 0.01, horizon: 100 } },
        entropy: { coef: 0.001, adaptive: { target: 5 } },
      },
      referenceResetEvery: 3,
    },
    eval: { every: 2 },
    checkpoint: { every: 2, keepLast: 4 },
    ...over,
  };
}

export function configYaml(cfg: RunConfigInput): string {
  return stringify(cfg);
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `node bin/rlvr.js <args>` in the repo root, single-threaded jax-js (the CPU is shared). */
export function rlvr(args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Exit> } {
  const child = spawn(process.execPath, [join(repoRoot, "bin", "rlvr.js"), ...args], {
    cwd: repoRoot,
    env: { ...process.env, RLVR_THREADS: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const done = new Promise<Exit>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

/** Poll `cond` every 10 ms until it holds; rejects when `done` settles first or after `ms`. */
export async function waitFor(cond: () => boolean, done: Promise<unknown>, what: string, ms = 120_000): Promise<void> {
  let finished = false;
  void done.then(() => (finished = true));
  const t0 = Date.now();
  while (!cond()) {
    if (finished) throw new Error(`the process ended before ${what}`);
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The metrics records of a run without wall-clock fields (time, step_time, time/*, throughput/*). */
export function metricsWithoutTiming(runDir: string): Record<string, unknown>[] {
  return readFileSync(join(runDir, "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => {
      const r = JSON.parse(l) as Record<string, unknown>;
      for (const k of Object.keys(r)) if (k === "time" || k === "step_time" || k.startsWith("time/") || k.startsWith("throughput/")) delete r[k];
      return r;
    });
}

/** Whether checkpoints/step-N exists (it only ever appears complete: it is renamed into place). */
export function hasCheckpoint(runDir: string, step: number): boolean {
  return existsSync(join(runDir, "checkpoints", `step-${step}`, "manifest.json"));
}

/** Lines of a file ("" → []). */
export function lines(path: string): string[] {
  const t = existsSync(path) ? readFileSync(path, "utf8") : "";
  return t ? t.trimEnd().split("\n") : [];
}
