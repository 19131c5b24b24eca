// A program that uses rlvr as a library (plain JavaScript, no TypeScript loader): it defines its
// own task and reward, trains a tiny model from scratch with GRPO for a few steps, and prints
// held-out accuracy before and after. CI runs it against the packed package (.ci/run):
//   npm install rlvr-<version>.tgz && node user.mjs
import { defineReward, defineTask, train } from "rlvr";

// The task: name the smallest of three digits ("3,8,5<" → "3"); held-out lists never appear in
// training (rlvr draws each example from a seeded stream and splits prompts by a hash). Its verify
// says what is correct (held-out accuracy).
defineTask({
  name: "smallest-digit",
  sample: (rng) => {
    const d = [rng.int(0, 9), rng.int(0, 9), rng.int(0, 9)];
    return { prompt: `${d.join(",")}<`, answer: String(Math.min(...d)) };
  },
  verify: (response, example) => response.trim().startsWith(example.answer),
});

// The reward RL maximises, by name in the config below: 1 for the answer, a little credit for
// answering with a digit at all, 0 otherwise.
defineReward({
  name: "smallest-digit-reward",
  score: (response, example) => (response.startsWith(example.answer) ? 1 : /^[0-9]/.test(response) ? { reward: 0.1, correct: false } : 0),
});

const run = await train(
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
  {
    quiet: true,
    onEvent: (e) => {
      if (e.type === "metrics" && e.stage === "rl" && e.step % 10 === 0) console.log(`step ${e.step}: mean reward ${e.metrics["reward/mean"].toFixed(2)}`);
    },
  },
);
const pct = (x) => `${(100 * x).toFixed(1)}%`;
console.log(`held-out accuracy: ${pct(run.before.accuracy)} before, ${pct(run.after.accuracy)} after GRPO (${run.seconds.toFixed(0)} s)`);
