/**
 * `rlvr quickstart` (`npm start`): the whole RLVR loop on a laptop CPU in a few minutes.
 *   1. generate a fixed-width 2-digit addition dataset ("07+45=" → "052") and write it to JSONL
 *      (read back by the dataset loader);
 *   2. SFT-warm a tiny character-level Llama-style model until it is right on 30% of a held-back
 *      set of training prompts (greedy), i.e. still unreliable;
 *   3. evaluate held-out accuracy: pass@1 at the policy's own temperature (mean over 4 samples per
 *      prompt, the quantity RL maximises) and greedy accuracy;
 *   4. run GRPO (verifier reward, group advantages, PPO-clip, no KL term) at the learning rate SFT
 *      ended on (docs/experiments.md, "Third round", for why);
 *   5. evaluate again, print a report and write <out>/summary.json.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { parseRunConfig } from "../../config/schema.ts";
import { paddedAdditionTask, generateExamples, writeExamplesJsonl } from "../../tasks/index.ts";
import { train } from "../../trainer/run.ts";
import { progressHooks } from "../progress.ts";
import { REAL_EVAL, runRealRecipe } from "../../recipes/real.ts";
import { EVAL_SAMPLES, quickstartConfig, type QuickstartOptions } from "../../recipes/quickstart.ts";

/** What the quickstart measured (also <out>/summary.json, with snake_case keys). */
export interface QuickstartResult {
  /** Held-out pass@1 at temperature 1 before / after GRPO, in [0, 1]. */
  accuracyBefore: number;
  accuracyAfter: number;
  /** Held-out greedy (temperature 0) accuracy before / after GRPO, in [0, 1]. */
  greedyBefore: number;
  greedyAfter: number;
  /** Wall-clock seconds for the whole quickstart. */
  seconds: number;
}

export async function runQuickstart(o: QuickstartOptions): Promise<QuickstartResult> {
  const t0 = performance.now();
  const out = resolve(o.out);
  const dataDir = join(out, "data");
  // A quickstart run again into its own directory (it holds the quickstart's data) starts over;
  // any other run there is refused by train() (src/trainer/rundir.ts).
  const again = existsSync(join(dataDir, "train.jsonl"));
  mkdirSync(dataDir, { recursive: true });
  process.stderr.write(`» data: ${o.digits}-digit fixed-width addition → ${dataDir}\n`);
  const trainFile = join(dataDir, "train.jsonl");
  const testFile = join(dataDir, "test.jsonl");
  writeExamplesJsonl(trainFile, generateExamples(paddedAdditionTask, { n: 20000, seed: o.seed, difficulty: o.digits, split: "train" }));
  writeExamplesJsonl(testFile, generateExamples(paddedAdditionTask, { n: 256, seed: o.seed, difficulty: o.digits, split: "test" }));
  const cfg = parseRunConfig(quickstartConfig({ ...o, out }, trainFile, testFile), "quickstart");
  const hooks = progressHooks();
  let advice: string | null = null; // how much faster the torch engine is here, when it is set up (src/engines/probe.ts)
  const engineAdvice = (line: string) => {
    advice = line;
    process.stderr.write(line + "\n");
  };
  const s = await train(cfg, { ...hooks, engineAdvice, overwrite: again });
  hooks.stop();
  const start = s.evals["sft"] ?? s.evals["init"]!;
  const end = s.evals["rl"] ?? start;
  const r: QuickstartResult = {
    accuracyBefore: start.meanAtN,
    accuracyAfter: end.meanAtN,
    greedyBefore: start.greedy ?? start.accuracy,
    greedyAfter: end.greedy ?? end.accuracy,
    seconds: (performance.now() - t0) / 1000,
  };
  const summary = { accuracy_before: r.accuracyBefore, accuracy_after: r.accuracyAfter, greedy_before: r.greedyBefore, greedy_after: r.greedyAfter, seconds: r.seconds };
  writeFileSync(join(out, "summary.json"), JSON.stringify(summary, null, 2) + "\n");
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const gain = (a: number, b: number) => `${b >= a ? "+" : ""}${((b - a) * 100).toFixed(1)} points`;
  process.stdout.write(
    [
      "",
      `rlvr quickstart — GRPO on ${o.digits}-digit addition (256 held-out prompts)`,
      "                                   after SFT warm-up   after GRPO",
      `  pass@1, temperature 1 (${EVAL_SAMPLES} samples): ${pct(r.accuracyBefore).padStart(8)}          ${pct(r.accuracyAfter).padStart(6)}  (${gain(r.accuracyBefore, r.accuracyAfter)})`,
      `  greedy accuracy:                ${pct(r.greedyBefore).padStart(8)}          ${pct(r.greedyAfter).padStart(6)}  (${gain(r.greedyBefore, r.greedyAfter)})`,
      `  time: ${r.seconds.toFixed(0)} s`,
      `  run directory: ${out}  (metrics.jsonl, samples.jsonl, eval.jsonl, report.md, checkpoints/final)`,
      `  evaluate it again: node bin/rlvr.js eval ${out} --task addition-padded --difficulty ${o.digits} --samples 8 --temperature 1`,
      ...(advice ? [`  ${advice}`] : []),
      "",
    ].join("\n"),
  );
  return r;
}

export function register(program: Command): void {
  program
    .command("quickstart")
    .description("generate data, SFT-warm a tiny model, train it with GRPO and report held-out accuracy before and after")
    .option("--out <dir>", "run directory", "runs/quickstart")
    .option("--digits <d>", "digits per operand (the task's difficulty)", (v) => parseInt(v, 10), 2)
    .option("--sft-steps <n>", "SFT warm-up steps at most (it stops earlier at 30% check-set accuracy)", (v) => parseInt(v, 10), 300)
    .option("--rl-steps <n>", "GRPO steps", (v) => parseInt(v, 10), 300)
    .option("--seed <s>", "seed", (v) => parseInt(v, 10), 1)
    .option("--model <name|dir>", "train a pretrained chat model instead: smollm2-135m-instruct (set up on first use) or a Hugging Face directory (GRPO on word problems; --rl-steps defaults to 30)")
    .option("--engine <name>", "with --model: torch (default) or embedded")
    .option("--lora", "with --model: train rank-16 LoRA adapters instead of every weight (always on the embedded engine)")
    .action(async (o: QuickstartOptions, cmd: Command) => {
      if (o.model) await runRealQuickstart(o, cmd.getOptionValueSource("rlSteps") === "cli" ? o.rlSteps : 30);
      else await runQuickstart(o);
    });
}

/** `rlvr quickstart --model <m>`: the real-model recipe, with progress and a before/after table. */
async function runRealQuickstart(o: QuickstartOptions, steps: number): Promise<void> {
  const out = o.out === "runs/quickstart" ? "runs/quickstart-real" : o.out;
  if (o.engine !== undefined && o.engine !== "torch" && o.engine !== "embedded") throw new Error(`rlvr quickstart: --engine must be torch or embedded, got "${o.engine}"`);
  const hooks = progressHooks();
  const r = await runRealRecipe(o.model!, { out, steps, seed: o.seed, engine: o.engine, lora: o.lora || undefined }, hooks);
  hooks.stop();
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const gain = (a: number, b: number) => `${b >= a ? "+" : ""}${((b - a) * 100).toFixed(1)} points`;
  process.stdout.write(
    [
      "",
      `rlvr quickstart --model ${o.model} — GRPO on word problems (${REAL_EVAL.prompts} held-out prompts, chat template)`,
      "                                   before      after GRPO",
      `  pass@1, temperature 1 (${REAL_EVAL.samples} samples): ${pct(r.accuracyBefore).padStart(8)}    ${pct(r.accuracyAfter).padStart(6)}  (${gain(r.accuracyBefore, r.accuracyAfter)})`,
      `  greedy accuracy:                ${pct(r.greedyBefore).padStart(8)}    ${pct(r.greedyAfter).padStart(6)}  (${gain(r.greedyBefore, r.greedyAfter)})`,
      `  time: ${r.seconds.toFixed(0)} s; run directory: ${resolve(out)}`,
      "",
    ].join("\n"),
  );
}
