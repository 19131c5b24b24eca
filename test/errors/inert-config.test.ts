// Inert knobs are errors (src/config/inert.ts): one case per inert combination, each refused at
// load with one line naming the field; controls where the same knob acts still load.
import assert from "node:assert/strict";
import { test } from "node:test";
import { INERT_RULES } from "../../src/config/inert.ts";
import { parseRunConfig } from "../../src/config/schema.ts";

type Obj = Record<string, unknown>;

/** `base` with `over` merged in, objects key by key (undefined removes a key). */
function merge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    if (v === undefined) delete out[k];
    else out[k] = v && typeof v === "object" && !Array.isArray(v) && b && typeof b === "object" && !Array.isArray(b) ? merge(b as Obj, v as Obj) : v;
  }
  return out;
}

const base: Obj = {
  model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
  tokenizer: { type: "char", alphabet: "0123456789+=" },
  data: { task: "addition", difficulty: 1, trainSize: 64, testSize: 8 },
  rl: { steps: 1, promptsPerStep: 2, groupSize: 2, maxNewTokens: 3 },
};
const torch = { model: { engine: "torch", device: "cpu" } };
const colocated = { model: { engine: "torch", device: "cpu" }, rollout: { engine: "vllm", mode: "colocated" } };
const server = { rollout: { engine: "vllm", mode: "server" } };
const withUrls = { rollout: { engine: "vllm", mode: "server", urls: ["http://127.0.0.1:8000"] } };
const openai = { rollout: { engine: "openai", baseURL: "http://127.0.0.1:8000/v1", model: "m" } };
const file = { data: { task: undefined, difficulty: undefined, trainSize: undefined, testSize: undefined, train: "t.jsonl", verifier: "math" } };

/** [case, config overrides, the field the error must name]. */
const inert: [string, Obj, string][] = [
  ["model.device on the embedded engine", { model: { device: "cpu" } }, "model.device"],
  ["model.dtype on the embedded engine", { model: { dtype: "bfloat16" } }, "model.dtype"],
  ["gradientCheckpointing on the embedded engine", { model: { gradientCheckpointing: true } }, "model.gradientCheckpointing"],
  ["tokenBudget on the embedded engine", { model: { tokenBudget: 4096 } }, "model.tokenBudget"],
  ["model.init beside model.path", { model: { path: "/m", engine: "torch" }, tokenizer: undefined }, "model.init"],
  ["lora.baseDtype on the torch engine", merge(torch, { model: { lora: { baseDtype: "bfloat16" } } }), "model.lora.baseDtype"],
  ["lora.dropout on the embedded engine", { model: { lora: { dropout: 0.1 } } }, "model.lora.dropout"],
  ["nativeKernels on the torch engine", merge(torch, { model: { nativeKernels: true } }), "model.nativeKernels"],
  ["a vLLM option without rollout.engine", { rollout: { gpuMemoryUtilization: 0.3 } }, "rollout.gpuMemoryUtilization"],
  ["an openai option with rollout.engine trainer", { rollout: { engine: "trainer", baseURL: "http://h:1/v1" } }, "rollout.baseURL"],
  ["rollout.apiKey with vLLM", merge(colocated, { rollout: { apiKey: "k" } }), "rollout.apiKey"],
  ["rollout.mode with openai", merge(openai, { rollout: { mode: "server" } }), "rollout.mode"],
  ["rollout.mismatchCorrection with openai", merge(openai, { rollout: { mismatchCorrection: false } }), "rollout.mismatchCorrection"],
  ["rollout.servers colocated", merge(colocated, { rollout: { servers: 2 } }), "rollout.servers"],
  ["rollout.extraArgs colocated", merge(colocated, { rollout: { extraArgs: ["--x"] } }), "rollout.extraArgs"],
  ["rollout.syncDir colocated", merge(colocated, { rollout: { syncDir: "/tmp/s" } }), "rollout.syncDir"],
  ["rollout.python colocated with model.python", merge(colocated, { model: { python: "/p" }, rollout: { python: "/q" } }), "rollout.python"],
  ["rollout.sleep in server mode", merge(server, { rollout: { sleep: true } }), "rollout.sleep"],
  ["rollout.servers with urls", merge(withUrls, { rollout: { servers: 2 } }), "rollout.servers"],
  ["rollout.kvCacheGiB with urls", merge(withUrls, { rollout: { kvCacheGiB: 2 } }), "rollout.kvCacheGiB"],
  ["gpuMemoryUtilization on CPU (model.device cpu)", merge(colocated, { rollout: { gpuMemoryUtilization: 0.3 } }), "rollout.gpuMemoryUtilization"],
  ["gpuMemoryUtilization on CPU (embedded engine, server mode)", merge(server, { rollout: { gpuMemoryUtilization: 0.3 } }), "rollout.gpuMemoryUtilization"],
  ["rollout.sleep on CPU", merge(colocated, { rollout: { sleep: false } }), "rollout.sleep"],
  ["kvCacheGiB on a GPU", merge(colocated, { model: { device: "cuda" }, rollout: { kvCacheGiB: 4 } }), "rollout.kvCacheGiB"],
  ["rollout.mismatchCorrection beside rl.algorithm.mismatch", merge(colocated, { rollout: { mismatchCorrection: false }, rl: { algorithm: { preset: "grpo", mismatch: { level: "token" } } } }), "rollout.mismatchCorrection"],
  ["rl.topP at temperature 0", { rl: { temperature: 0, topP: 0.9 } }, "rl.topP"],
  ["rl.topK at temperature 0", { rl: { temperature: 0, topK: 5 } }, "rl.topK"],
  ["eval.greedy at temperature 0", { eval: { greedy: true } }, "eval.greedy"],
  ["eval.samples at temperature 0", { eval: { samples: 4 } }, "eval.samples"],
  ["eval.every without rl", { rl: undefined, sft: { steps: 1 }, eval: { every: 2 } }, "eval.every"],
  ["rl.minLrRatio with a constant schedule", { rl: { minLrRatio: 0.5 } }, "rl.minLrRatio"],
  ["sft.minLrRatio with a constant schedule", { sft: { steps: 1, schedule: "constant", minLrRatio: 0.5 } }, "sft.minLrRatio"],
  ["verifierPool options with the pool off", { rl: { verifierPool: { size: 4 } } }, "rl.verifierPool.size"],
  ["an option of a block with enabled: false", { rl: { dynamicSampling: { enabled: false, maxGenBatches: 3 } } }, "rl.dynamicSampling.maxGenBatches"],
  ["an algorithm block with enabled: false", { rl: { algorithm: { preset: "grpo", overlong: { enabled: false, factor: 2 } } } }, "rl.algorithm.overlong.factor"],
  ["data.trainSize with data.train", merge(file, { data: { trainSize: 100 } }), "data.trainSize"],
  ["data.difficulty with data.train", merge(file, { data: { difficulty: 2 } }), "data.difficulty"],
  ["data.testSize without data.test", merge(file, { data: { testSize: 10 } }), "data.testSize"],
  ["data.test with a generated task", { data: { test: "e.jsonl" } }, "data.test"],
  ["data.onBadRow with a generated task", { data: { onBadRow: "skip" } }, "data.onBadRow"],
];

for (const [name, over, field] of inert) {
  test(`inert: ${name} is refused naming ${field}`, () => {
    assert.throws(
      () => parseRunConfig(merge(base, over), "run.yaml"),
      (e: Error) => {
        assert.equal(e.name, "ConfigError");
        assert.equal(e.message.split("\n").length, 1, "one line");
        assert.ok(e.message.startsWith(`config error in run.yaml at ${field}: `), e.message);
        return true;
      },
    );
  });
}

/** The same knobs where they act: these must load. */
const controls: [string, Obj][] = [
  ["torch options on the torch engine", { model: { engine: "torch", device: "cpu", dtype: "float32", gradientCheckpointing: true, tokenBudget: 4096 } }],
  ["torch options under engine auto", { model: { engine: "auto", dtype: "float32", tokenBudget: 4096 } }],
  ["model.python on the embedded engine (the engine advice reads it)", { model: { python: "/p" } }],
  ["lora.baseDtype on the embedded engine", { model: { lora: { baseDtype: "bfloat16" } } }],
  ["nativeKernels on the embedded engine", { model: { nativeKernels: true } }],
  ["lora.dropout on the torch engine", merge(torch, { model: { lora: { dropout: 0.1 } } })],
  ["colocated vLLM on CPU with kvCacheGiB, dtype, python", merge(colocated, { rollout: { kvCacheGiB: 2, dtype: "float32", python: "/q" } })],
  ["colocated vLLM on a GPU with gpuMemoryUtilization and sleep", merge(colocated, { model: { device: "cuda:0" }, rollout: { gpuMemoryUtilization: 0.3, sleep: true } })],
  ["vLLM servers rlvr starts, with their flags", merge(server, { rollout: { servers: 2, kvCacheGiB: 2, startupTimeoutS: 60, extraArgs: ["--x"], syncDir: "/tmp/s" } })],
  ["running vLLM servers with a sync dir", merge(withUrls, { rollout: { syncDir: "/tmp/s", mismatchCorrection: false } })],
  ["openai with its options", merge(openai, { rollout: { apiKey: "k", syncDir: "/tmp/s" } })],
  ["topP and topK at temperature 1", { rl: { temperature: 1, topP: 0.9, topK: 5 } }],
  ["eval samples and greedy at temperature 1", { eval: { temperature: 1, samples: 4, greedy: true, every: 1 } }],
  ["minLrRatio with cosine", { rl: { schedule: "cosine", minLrRatio: 0.5 }, sft: { steps: 1, minLrRatio: 0.5 } }],
  ["verifierPool options with the pool on", { rl: { verifierPool: { enabled: true, size: 2, timeoutMs: 500 } } }],
  ["enabled: false alone, and enabled blocks with options", { rl: { dynamicSampling: { enabled: false }, difficultyFilter: { low: 0.1, high: 0.9 } } }],
  ["data.preset and data.fields with a generated task (rlvr eval --data reads them)", { data: { preset: "gsm8k", fields: { answer: "final" } } }],
  ["dataset options with data.train and data.test", merge(file, { data: { test: "e.jsonl", testSize: 10, preset: "gsm8k", onBadRow: "skip" } })],
  ["defaults written out (a run directory's config.yaml)", { model: { device: "auto", dtype: "auto", tokenBudget: 16384 }, rl: { minLrRatio: 0.1, verifierPool: { enabled: false, timeoutMs: 10000, fallback: 0, modules: [] } }, eval: { samples: 1, greedy: false } }],
];

for (const [name, over] of controls) {
  test(`acts: ${name} loads`, () => {
    parseRunConfig(merge(base, over), "run.yaml");
  });
}

test("every rule has an inert case above", () => {
  for (const rule of INERT_RULES) assert.ok(inert.some(([, , f]) => rule.fields.includes(f)), `no case for ${rule.fields.join(", ")}`);
});
