// The TypeScript version of user.mjs: the same program, typed against the package's declarations.
// CI type-checks it against the installed package (.ci/run: tsc --noEmit with tsconfig.user.json).
import { defineReward, defineTask, train, type Example, type RewardReturn, type RunSummary, type TrainEvent } from "rlvr";
import type { Rng } from "rlvr";

defineTask({
  name: "smallest-digit",
  sample: (rng: Rng) => {
    const d = [rng.int(0, 9), rng.int(0, 9), rng.int(0, 9)];
    return { prompt: `${d.join(",")}<`, answer: String(Math.min(...d)) };
  },
  verify: (response: string, example: Example): boolean => response.trim().startsWith(example.answer),
});

defineReward({
  name: "smallest-digit-reward",
  score: (response: string, example: Example): RewardReturn => (response.startsWith(example.answer) ? 1 : /^[0-9]/.test(response) ? { reward: 0.1, correct: false } : 0),
});

const onEvent = (e: TrainEvent): void => {
  if (e.type === "metrics" && e.stage === "rl" && e.step % 10 === 0) console.log(`step ${e.step}: mean reward ${e.metrics["reward/mean"]!.toFixed(2)}`);
};
const run: RunSummary = await train(
  {
    seed: 7,
    out: "runs/smallest-digit",
    model: { init: { hiddenSize: 32, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 16 } },
    tokenizer: { type: "char", alphabet: "0123456789,<" },
    data: { task: "smallest-digit", trainSize: 2000, testSize: 128 },
    reward: { verifier: "smallest-digit-reward" },
    rl: { steps: 40, promptsPerStep: 16, groupSize: 8, maxNewTokens: 1, lr: 3e-3, algorithm: "grpo" },
    eval: { maxNewTokens: 1 },
  },
  { quiet: true, onEvent },
);
const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
console.log(`held-out accuracy: ${pct(run.before.accuracy)} before, ${pct(run.after.accuracy)} after GRPO (${run.seconds.toFixed(0)} s)`);
