// The guess env through the public API: import the env (it registers itself with defineEnv), then
// train() a config object naming it. Same run as config.yaml.
//   npx tsx examples/guess/train.ts [steps]
import { train } from "../../src/index.ts"; // in your project: from "rlvr"
import { GUESS_ALPHABET } from "./env.ts";

const steps = Number(process.argv[2] ?? 150);
const summary = await train({
  seed: 1,
  out: "runs/guess-api",
  model: { init: { hiddenSize: 32, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 32 } },
  tokenizer: { type: "char", alphabet: GUESS_ALPHABET },
  env: { name: "guess", maxTurns: 4, maxTokens: 12 },
  data: { trainSize: 5000, testSize: 64 },
  rl: { steps, promptsPerStep: 16, groupSize: 8, maxNewTokens: 12, temperature: 1, lr: 0.02, algorithm: { preset: "grpo", kl: { coef: 0 } } },
  eval: { temperature: 0, maxNewTokens: 12 },
});
console.log(`held-out episodes solved (greedy): ${(summary.before.accuracy * 100).toFixed(1)}% -> ${(summary.after.accuracy * 100).toFixed(1)}%`);
