/**
 * `rlvr quickstart` (`npm start`): the whole RLVR loop on a laptop CPU in a few minutes.
 *   1. generate a multi-digit addition dataset and write it to JSONL (read back by the loader);
 *   2. SFT-warm a tiny character-level Llama-style model on a few demonstrations;
 *   3. evaluate held-out exact-match accuracy;
 *   4. run GRPO (verifier reward, group advantages, PPO-clip);
 *   5. evaluate again, print a report and write <out>/summary.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { parseRunConfig, type RunConfigInput } from "../../config/schema.ts";
import { additionTask, generateExamples, writeExamplesJsonl } from "../../tasks/index.ts";
import { train } from "../../trainer/run.ts";
import { progressHooks } from "../progress.ts";

export interface QuickstartOptions {
  out: string;
  digits: number;
  sftSteps: number;
  rlSteps: number;
  seed: number;
}

/** The quickstart's run config (also written to <out>/config.yaml by the run). */
export function quickstartConfig(o: QuickstartOptions, trainFile: string, testFile: string): RunConfigInput {
  return {
    seed: o.seed,
    out: o.out,
    model: { init: { hiddenSize: 128, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 32 } },
    tokenizer: { type: "char", alphabet: "0123456789+=" },
    data: { task: "addition", train: trainFile, test: testFile, testSize: 256 },
    sft: { steps: o.sftSteps, batchSize: 128, lr: 3e-3, schedule: "cosine", warmupSteps: 10, weightDecay: 0.01 },
    rl: {
      steps: o.rlSteps,
      promptsPerStep: 64,
      groupSize: 8,
      maxNewTokens: o.digits + 2,
      temperature: 1,
      lr: 1e-4,
      algorithm: "grpo",
    },
    eval: { every: 0, temperature: 0, maxNewTokens: o.digits + 2 },
  };
}

export async function runQuickstart(o: QuickstartOptions): Promise<{ accuracyBefore: number; accuracyAfter: number; seconds: number }> {
  const t0 = performance.now();
  const out = resolve(o.out);
  const dataDir = join(out, "data");
  mkdirSync(dataDir, { recursive: true });
  process.stderr.write(`» data: ${o.digits}-digit addition → ${dataDir}\n`);
  const trainFile = join(dataDir, "train.jsonl");
  const testFile = join(dataDir, "test.jsonl");
  writeExamplesJsonl(trainFile, generateExamples(additionTask, { n: 20000, seed: o.seed, difficulty: o.digits, split: "train" }));
  writeExamplesJsonl(testFile, generateExamples(additionTask, { n: 256, seed: o.seed, difficulty: o.digits, split: "test" }));
  const cfg = parseRunConfig(quickstartConfig({ ...o, out }, trainFile, testFile), "quickstart");
  const hooks = progressHooks();
  const s = await train(cfg, hooks);
  hooks.stop();
  const before = s.evals["sft"]?.accuracy ?? s.evals["init"]!.accuracy;
  const after = s.evals["rl"]?.accuracy ?? before;
  const seconds = (performance.now() - t0) / 1000;
  writeFileSync(join(out, "summary.json"), JSON.stringify({ accuracy_before: before, accuracy_after: after, seconds }, null, 2) + "\n");
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  process.stdout.write(
    [
      "",
      "rlvr quickstart — GRPO on multi-digit addition",
      `  held-out accuracy after SFT warm-up (before RL): ${pct(before)}`,
      `  held-out accuracy after GRPO:                    ${pct(after)}  (${after >= before ? "+" : ""}${((after - before) * 100).toFixed(1)} points)`,
      `  time: ${seconds.toFixed(0)} s`,
      `  run directory: ${out}  (metrics.jsonl, samples.jsonl, eval.jsonl, report.md, checkpoints/final)`,
      `  evaluate it again: node bin/rlvr.js eval ${out} --task addition --difficulty ${o.digits}`,
      "",
    ].join("\n"),
  );
  return { accuracyBefore: before, accuracyAfter: after, seconds };
}

export function register(program: Command): void {
  program
    .command("quickstart")
    .description("generate data, SFT-warm a tiny model, train it with GRPO and report held-out accuracy before and after")
    .option("--out <dir>", "run directory", "runs/quickstart")
    .option("--digits <d>", "digits per operand (the task's difficulty)", (v) => parseInt(v, 10), 2)
    .option("--sft-steps <n>", "SFT warm-up steps", (v) => parseInt(v, 10), 700)
    .option("--rl-steps <n>", "GRPO steps", (v) => parseInt(v, 10), 80)
    .option("--seed <s>", "seed", (v) => parseInt(v, 10), 1)
    .action(async (o: QuickstartOptions) => {
      await runQuickstart(o);
    });
}
