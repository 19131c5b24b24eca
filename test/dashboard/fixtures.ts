/**
 * Fixture run directories shaped like what src/trainer/run.ts writes (config.yaml, metrics.jsonl,
 * samples.jsonl, eval.jsonl, report.md), with deterministic made-up numbers — no training.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Rng } from "../../src/util/rng.ts";

export interface FixtureOptions {
  rlSteps?: number;
  sftSteps?: number;
  /** Learning speed: accuracy rises towards 1 − exp(−rate·step). */
  rate?: number;
  seed?: number;
  samplesPerStep?: number;
}

/** One RL metrics record as src/pipeline/metrics.ts logs it. */
export function rlRecord(step: number, rng: Rng, rate: number): Record<string, unknown> {
  const acc = Math.min(1, Math.max(0, 1 - Math.exp(-rate * step) + 0.05 * (rng.next() - 0.5)));
  return {
    time: new Date(Date.UTC(2026, 0, 1, 0, 0, step)).toISOString(),
    stage: "rl",
    step,
    "reward/mean": acc,
    accuracy: acc,
    "groups/zero_std_frac": 0.2 + 0.6 * acc * acc,
    "groups/trained_seqs": 64,
    "response/length_mean": 6 + 2 * Math.sin(step / 3),
    "response/length_max": 10,
    "response/truncated_frac": Math.max(0, 0.3 - 0.02 * step),
    entropy: 1.5 * Math.exp(-0.05 * step) + 0.1,
    kl: 0.001 * step,
    kl_coef: 0.001,
    "loss/policy": 0.01 * (rng.next() - 0.5),
    clipfrac_low: 0.02 * rng.next(),
    clipfrac_high: 0.05 * rng.next(),
    ratio_max: 1.2,
    grad_norm: 0.5 + rng.next(),
    updates: 1,
    "time/sample": 0.5,
    "time/reward": 0.05,
    "time/train": 0.8,
    "time/step": 1.35 + 0.1 * rng.next(),
    "throughput/sample_tokens_per_s": 900,
  };
}

/** Write a fixture run directory and return its path. */
export function writeFixtureRun(dir: string, o: FixtureOptions = {}): string {
  const rng = new Rng(o.seed ?? 1);
  const rate = o.rate ?? 0.15;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.yaml"), `seed: ${o.seed ?? 1}\nout: ${dir}\nmodel:\n  init:\n    hiddenSize: 64\ndata:\n  task: addition\nrl:\n  steps: ${o.rlSteps ?? 20}\n  groupSize: 4\n`);
  const metrics: string[] = [];
  for (let s = 1; s <= (o.sftSteps ?? 5); s++) metrics.push(JSON.stringify({ time: new Date(Date.UTC(2026, 0, 1)).toISOString(), stage: "sft", step: s, loss: 2 / s, nll: 2 / s, lr: 0.003, grad_norm: 1, step_time: 0.1 }));
  for (let s = 1; s <= (o.rlSteps ?? 20); s++) metrics.push(JSON.stringify(rlRecord(s, rng, rate)));
  writeFileSync(join(dir, "metrics.jsonl"), metrics.join("\n") + "\n");
  const samples: string[] = [];
  for (let s = 1; s <= (o.rlSteps ?? 20); s++) {
    for (let i = 0; i < (o.samplesPerStep ?? 4); i++) {
      const a = 10 + s, b = 20 + i;
      const correct = rng.next() < 1 - Math.exp(-rate * s);
      const response = correct ? String(a + b) : String(a + b + 1 + i);
      samples.push(JSON.stringify({ step: s, prompt: `${a}+${b}=`, response, answer: String(a + b), reward: correct ? 1 : 0, advantage: correct ? 0.8 - 0.1 * i : -0.6 - 0.1 * i, correct, reason: correct ? "ok" : `expected ${a + b}`, stop: i === 3 ? "max_tokens" : "completed" }));
    }
  }
  writeFileSync(join(dir, "samples.jsonl"), samples.join("\n") + "\n");
  const ev = (label: string, step: number, acc: number) => ({
    label,
    step,
    prompts: 64,
    samples: 8,
    accuracy: acc,
    greedy: acc,
    meanAtN: acc * 0.9,
    passAtK: { "pass@1": acc * 0.9, "pass@2": Math.min(1, acc * 1.2), "pass@4": Math.min(1, acc * 1.4), "pass@8": Math.min(1, acc * 1.5) },
    majAtK: { "maj@1": acc * 0.9, "maj@2": acc * 0.92, "maj@4": acc, "maj@8": Math.min(1, acc * 1.05) },
    meanLength: 6.5,
    maxLength: 10,
    truncated: 0.05,
    ci: { accuracy: { low: Math.max(0, acc - 0.1), high: Math.min(1, acc + 0.1) } },
  });
  const n = o.rlSteps ?? 20;
  writeFileSync(join(dir, "eval.jsonl"), [ev("sft", 0, 0.1), ev("rl", Math.floor(n / 2), 1 - Math.exp(-rate * n / 2)), ev("rl", n, 1 - Math.exp(-rate * n))].map((e) => JSON.stringify(e)).join("\n") + "\n");
  writeFileSync(join(dir, "report.md"), `# rlvr run\n\n- run directory: ${dir}\n`);
  return dir;
}

/** Append more RL steps to a fixture run (a live run, as the dashboard sees it). */
export function appendRlSteps(dir: string, from: number, count: number, rate = 0.15): void {
  const rng = new Rng(from);
  const lines: string[] = [];
  for (let s = from; s < from + count; s++) lines.push(JSON.stringify(rlRecord(s, rng, rate)));
  appendFileSync(join(dir, "metrics.jsonl"), lines.join("\n") + "\n");
}
