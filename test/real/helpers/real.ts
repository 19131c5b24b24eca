/**
 * Shared by the real-model suite (test/real, `npm run test:real`): where the imported
 * SmolLM2-135M-Instruct lives, its wheel, and transformers' side of each comparison.
 *
 * The model directory is $RLVR_REAL_MODEL, else what `rlvr setup model smollm2-135m-instruct`
 * wrote (~/.cache/rlvr/models/smollm2-135m-instruct); the suite fails with that command when it is
 * missing (it runs only when named, so a missing model is an error, not a skip).
 *
 * Hook for more real-model tests (e.g. a GRPO run whose held-out accuracy must rise): add a
 * test/real/<name>.test.ts that opens `realModelDir()` with `model.path`; run-tests.mjs picks it up.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { MODEL_CATALOG, defaultModelDir, importedFrom, rlvrCacheDir } from "../../../src/engines/torch/model-import.ts";
import { resolvePython } from "../../../src/engines/torch/worker.ts";
import { packSequences } from "../../../src/core/sequence.ts";
import type { TokenBatch, TokenLossFn } from "../../../src/core/engine.ts";
import { loadTokenizer, promptEncoder } from "../../../src/tokenizers/index.ts";
import { generateExamples, wordProblemsTask } from "../../../src/tasks/index.ts";
import { Rng } from "../../../src/util/rng.ts";

export const REAL_MODEL = "smollm2-135m-instruct";
const SETUP = `run \`rlvr setup model ${REAL_MODEL}\` first (or set $RLVR_REAL_MODEL to an imported directory)`;

/** The imported model's directory. @throws naming the setup command when it is missing. */
export function realModelDir(): string {
  const dir = process.env.RLVR_REAL_MODEL ?? defaultModelDir(REAL_MODEL);
  if (!existsSync(join(dir, "model.safetensors"))) throw new Error(`no imported ${REAL_MODEL} at ${dir}: ${SETUP}`);
  if (!process.env.RLVR_REAL_MODEL && importedFrom(dir) !== MODEL_CATALOG[REAL_MODEL]!.sha256) throw new Error(`${dir} is not an import of ${MODEL_CATALOG[REAL_MODEL]!.wheel}: ${SETUP}`);
  return dir;
}

/** The wheel `rlvr setup model` cached ($RLVR_REAL_WHEEL overrides). */
export function realWheel(): string {
  const w = process.env.RLVR_REAL_WHEEL ?? join(rlvrCacheDir(), "wheels", MODEL_CATALOG[REAL_MODEL]!.wheel);
  if (!existsSync(w)) throw new Error(`no cached wheel at ${w}: ${SETUP}`);
  return w;
}

/** The Python with torch + transformers the tests compare against ($RLVR_TEST_PYTHON, else the torch engine's). */
export const testPython = (): string => process.env.RLVR_TEST_PYTHON ?? resolvePython();

/** Run test/real/helpers/hf.py `op` on `dir` with `input` (see its docstring). */
export function hf<T>(op: "tokenize" | "logprobs" | "generate", dir: string, input: unknown): T {
  const r = spawnSync(testPython(), [join(import.meta.dirname, "hf.py"), op, dir], { input: JSON.stringify(input), encoding: "utf8", maxBuffer: 1 << 28, env: { ...process.env, TRANSFORMERS_VERBOSITY: "error" } });
  if (r.status !== 0) throw new Error(`hf.py ${op} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as T;
}

/** Strings whose ids the tokenizers must agree on: plain text, digits after runs of spaces (where
 *  SmolLM's digit split changes ids), unicode, code, and the chat markup's special tokens. */
export const PROBE_STRINGS = [
  "The quick brown fox jumps over the lazy dog.",
  "What is 17 + 25? Answer: 42",
  "12345 67890 2024-11-27 3.14159 1,000,000",
  "a  1",
  "Total:  42 apples\n\n  3 + 4 =   7",
  "x=1;\ty = 22\n    return 333",
  "naïve café — 東京 🙂 ١٢٣ ²3",
  "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
];

/**
 * The training batch of one RL step of the real-model recipe at bench size: 4 word problems
 * (difficulty 1, seed 1) in the model's chat template × 4 responses × 32 fixed token ids
 * (100..2099, seeded), right-padded: 16 × 105 tokens for SmolLM2. With `rlStepLoss` (−0.01 · Σ lp
 * over the responses) it times and checks one LoRA step on either engine.
 */
export async function rlStepBatch(dir: string): Promise<{ batch: TokenBatch; promptLengths: number[] }> {
  const tok = await loadTokenizer(dir);
  const prompts = generateExamples(wordProblemsTask, { n: 4, seed: 1, difficulty: 1, split: "train" }).map(promptEncoder(tok, { chat: true }));
  const rng = new Rng(1);
  const seqs = prompts.flatMap((prompt) => Array.from({ length: 4 }, () => ({ prompt, response: Array.from({ length: 32 }, () => Math.floor(rng.next() * 2000) + 100) })));
  return { batch: packSequences(seqs, tok.padId), promptLengths: prompts.map((p) => p.length) };
}

/** −0.01 · Σ log-probs of the scored tokens (the gradient of a policy-gradient step with advantage 0.01). */
export const rlStepLoss: TokenLossFn = (scores, b) => {
  const d = new Float32Array(b.lossMask.length);
  let s = 0;
  for (let i = 0; i < d.length; i++)
    if (b.lossMask[i]) {
      d[i] = -0.01;
      s -= 0.01 * scores.logprobs[i]!;
    }
  return { loss: s, dLogprobs: d, metrics: {} };
};
