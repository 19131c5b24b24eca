// A program that uses rlvr as a library (plain JavaScript, no TypeScript loader): it defines its
// own task and reward, trains a tiny model from scratch with GRPO for a few steps, and prints
// held-out accuracy before and after. CI runs it against the packed package (.ci/run):
//   npm install rlvr-<version>.tgz && node user.mjs
import { defineTask, train } from "rlvr";

/** Three digits for example `index` of `split`: held-out lists (digit sum divisible by 5) never appear in training. */
function digits(seed, split, index) {
  for (let attempt = 0; ; attempt++) {
    let h = (seed * 0x9e3779b1) ^ (index * 0x85ebca6b) ^ (attempt * 0xc2b2ae35);
    const d = [0, 1, 2].map(() => ((h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + 0x6d2b79f5), (h >>> 0) % 10));
    if ((d[0] + d[1] + d[2]) % 5 === 0 === (split === "test")) return d;
  }
}

// The task: name the smallest digit ("3,8,5<" → "3"); the reward: 1 when the response starts with it.
defineTask({
  name: "smallest-digit",
  generate: ({ seed, split, index }) => {
    const d = digits(seed, split, index);
    return { prompt: `${d.join(",")}<`, answer: String(Math.min(...d)) };
  },
  verify: (response, example) => response.trim().startsWith(example.answer),
});

const run = await train(
  {
    seed: 7,
    out: "runs/smallest-digit",
    model: { init: { hiddenSize: 32, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 16 } },
    tokenizer: { type: "char", alphabet: "0123456789,<" },
    data: { task: "smallest-digit", trainSize: 2000, testSize: 128 },
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
console.log(`held-out accuracy: ${pct(run.evals.init.accuracy)} before, ${pct(run.evals.rl.accuracy)} after GRPO (${run.seconds.toFixed(0)} s)`);
