// The memory plan's arithmetic (src/trainer/plan.ts): parts by hand for a small torch model,
// FSDP2 sharding, LoRA's trainable state, vLLM's parts, and the refusal naming the field.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseRunConfig } from "../../src/config/schema.ts";
import type { ModelConfig } from "../../src/engines/embedded/hf-config.ts";
import { countParams } from "../../src/engines/embedded/memory.ts";
import { checkMemoryPlan, estimateMemoryPlan, formatMemoryPlan, processPeaks, torchActivationBytes, type MemoryPlan } from "../../src/trainer/plan.ts";
import { buildContext } from "../../src/trainer/context.ts";

const model: ModelConfig = { modelType: "llama", vocabSize: 1000, hiddenSize: 64, intermediateSize: 192, numLayers: 2, numHeads: 2, numKvHeads: 2, headDim: 32, rmsNormEps: 1e-5, ropeTheta: 10000, maxPositionEmbeddings: 64, tieWordEmbeddings: true } as ModelConfig;
const shape = { model, promptTokens: 8 };
const base = { model: { engine: "torch", device: "cpu", init: {} }, tokenizer: { type: "char", alphabet: "0123456789+=" }, data: { task: "addition" }, rl: { steps: 1, promptsPerStep: 4, groupSize: 4, maxNewTokens: 8 } };
const part = (p: MemoryPlan, proc: string, name: string) => p.parts.find((x) => x.process === proc && x.part === name)?.bytes;

test("torch worker: parameters, gradients, AdamW and activations of one micro-batch, by hand", () => {
  const plan = estimateMemoryPlan(parseRunConfig(base), shape, { hostBytes: 64 * 2 ** 30 });
  const P = countParams(model);
  assert.equal(part(plan, "torch worker", "parameters"), P * 4);
  assert.equal(part(plan, "torch worker", "gradients"), P * 4);
  assert.equal(part(plan, "torch worker", "optimizer"), 2 * P * 4);
  assert.equal(part(plan, "torch worker", "reference"), P * 4, "grpo's KL term holds a float32 reference");
  // 16 sequences × (8 prompt + 8 new) tokens in one pass.
  assert.equal(part(plan, "torch worker", "activations"), torchActivationBytes(model, 16 * 16, 16, false));
  assert.equal(torchActivationBytes(model, 256, 16, false), 256 * (2 * (16 * 64 + 6 * 192 + 2 * 16) + 6 * 1000) * 4);
  assert.equal(checkMemoryPlan(plan), null);
  assert.match(formatMemoryPlan(plan), /torch worker\s+activations/);
});

test("model.tokenBudget splits the pass; FSDP2 shards the state over ranks; LoRA trains only the adapters", () => {
  const budget = estimateMemoryPlan(parseRunConfig({ ...base, model: { ...base.model, tokenBudget: 64 } }), shape);
  assert.equal(part(budget, "torch worker", "activations"), torchActivationBytes(model, 64, 16, false));
  assert.equal(budget.parts.find((p) => p.part === "activations")!.field, "model.tokenBudget");
  const fsdp = estimateMemoryPlan(parseRunConfig({ ...base, model: { ...base.model, distributed: { nprocPerNode: 2 } } }), shape);
  assert.equal(part(fsdp, "torch rank 1", "optimizer"), countParams(model) * 4, "2 moments / 2 ranks");
  const lora = estimateMemoryPlan(parseRunConfig({ ...base, model: { ...base.model, lora: { rank: 4, targets: ["q_proj", "v_proj"] } } }), shape);
  assert.equal(part(lora, "torch worker", "gradients"), 2 * 4 * (64 + 64 + 64 + 64) * 4, "2 layers × rank 4 × (in + out) of q and v");
});

test("colocated vLLM adds its runtime, weights, KV cache and a sync buffer to the torch worker", () => {
  const cfg = parseRunConfig({ ...base, rollout: { engine: "vllm", kvCacheGiB: 2 } });
  const plan = estimateMemoryPlan(cfg, shape);
  assert.equal(part(plan, "torch worker", "KV cache"), 2 * 2 ** 30);
  assert.equal(part(plan, "torch worker", "vLLM weights"), countParams(model) * 4);
  assert.ok(part(plan, "torch worker", "sync buffer")! > 0);
  assert.ok(processPeaks(plan)["torch worker"]! > 2 * 2 ** 30);
});

test("a plan over the host's memory is refused with the field to change, one line", () => {
  const plan = estimateMemoryPlan(parseRunConfig({ ...base, rollout: { engine: "vllm", kvCacheGiB: 6 } }), shape, { hostBytes: 4 * 2 ** 30 });
  const bad = checkMemoryPlan(plan)!;
  assert.equal(bad.field, "rollout.kvCacheGiB");
  assert.match(bad.message, /^the memory plan needs [\d.]+ GiB on host, more than its 4\.0 GiB \(largest part: torch worker KV cache, 6\.0 GiB: .*\); lower rollout\.kvCacheGiB/);
  assert.equal(bad.message.split("\n").length, 1);
});

test("train refuses a config whose plan cannot fit this machine before any engine starts", async () => {
  const cfg = parseRunConfig({ ...base, rollout: { engine: "vllm", kvCacheGiB: 1 << 16 } });
  await assert.rejects(buildContext(cfg), /^Error: config error at rollout\.kvCacheGiB: the memory plan needs 64\.\d TiB on host/);
});
