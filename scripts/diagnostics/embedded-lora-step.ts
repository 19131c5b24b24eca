/**
 * One LoRA forward-backward + AdamW step of the real-model RL batch shape on the embedded engine:
 * 4 prompts (word problems in SmolLM2's chat template) × 4 responses × 32 tokens, the batch an RL
 * step of `bench/compare.ts`'s real row trains on, without sampling (responses are fixed token
 * ids). Prints the time and the Wasm heap's high-water mark, or the error. `--engine torch` runs the
 * same batch and loss on the torch engine (peft LoRA, CPU) for the ratio.
 *   RLVR_THREADS=2 npx tsx scripts/diagnostics/embedded-lora-step.ts [modelDir] [--engine embedded|torch] [--rank 16] [--base auto|float32|bfloat16] [--steps 2] [--rollout: sample 4×4×32 and score before each step]
 */
import "../../test/engines/helpers/wasm-memory.ts"; // before @jax-js/jax: records the Wasm heap
import { homedir, loadavg } from "node:os";
import { join } from "node:path";
import { wasmHeapBytes } from "../../test/engines/helpers/wasm-memory.ts";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import { rlStepBatch, rlStepLoss } from "../../test/real/helpers/real.ts";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : dflt;
};
const dir = args[0] && !args[0].startsWith("--") ? args[0] : join(homedir(), ".cache/rlvr/models/smollm2-135m-instruct");
const lora = loraConfigSchema.parse({ rank: Number(opt("rank", "16")), baseDtype: opt("base", "auto") });
const gib = (b: number) => (b / 2 ** 30).toFixed(2);

const { batch, promptLengths } = await rlStepBatch(dir);
console.log(`# batch ${batch.batchSize} × ${batch.seqLen} tokens (prompts ${promptLengths.join(", ")})`);

const t0 = performance.now();
const torch = opt("engine", "embedded") === "torch";
const threads = Number(process.env.RLVR_THREADS ?? 2);
const e = torch ? await TorchEngine.fromPretrained(dir, { lora, device: "cpu", threads, onStderr: () => {} }) : await EmbeddedEngine.fromPretrained(dir, { lora });
console.log(`# ${e.info().engine} load ${((performance.now() - t0) / 1000).toFixed(1)} s; ${e.info().dtype}; heap ${gib(wasmHeapBytes())} GiB; load average ${loadavg()[0]!.toFixed(1)}`);
const rollout = args.includes("--rollout");
for (let i = 0; i < Number(opt("steps", "2")); i++) {
  const t = performance.now();
  try {
    if (rollout) {
      // The RL step's other phases first (sampling, then scoring the batch), as rlStep runs them.
      const prompts = Array.from({ length: 4 }, (_, u) => batch.tokens.slice(u * 4 * batch.seqLen, u * 4 * batch.seqLen + promptLengths[u]!));
      await e.sample({ prompts, n: 4, maxNewTokens: 32, temperature: 1, seed: i, stopTokens: [] });
      const ts = performance.now();
      await e.score(batch, { model: "policy" });
      console.log(`  sample ${((ts - t) / 1000).toFixed(1)} s, score ${((performance.now() - ts) / 1000).toFixed(1)} s, heap ${gib(wasmHeapBytes())} GiB`);
    }
    const r = await e.forwardBackward(batch, rlStepLoss);
    const { gradNorm } = await e.optimStep({ lr: 1e-5 });
    console.log(`step ${i + 1}: ${((performance.now() - t) / 1000).toFixed(1)} s, loss ${r.loss.toFixed(4)}, grad norm ${gradNorm.toExponential(3)}, heap ${gib(wasmHeapBytes())} GiB, rss ${gib(process.memoryUsage().rss)} GiB, load ${loadavg()[0]!.toFixed(1)}`);
  } catch (err) {
    console.log(`step ${i + 1}: failed after ${((performance.now() - t) / 1000).toFixed(1)} s: ${(err as Error).message}; heap ${gib(wasmHeapBytes())} GiB`);
    break;
  }
}
await e.close();
