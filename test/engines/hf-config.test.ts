import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import {
  parseHfConfig,
  toHfConfig,
  hfParamNames,
  validateModelConfig,
  readHfConfig,
  writeHfConfig,
  type ModelConfig,
} from "../../src/engines/embedded/hf-config.ts";
import { writeSafetensors } from "../../src/engines/embedded/safetensors.ts";

// Published hyper-parameters of Qwen2.5-0.5B (qwen2) and SmolLM2-135M (llama), typed in as test data.
const qwen25 = {
  architectures: ["Qwen2ForCausalLM"],
  model_type: "qwen2",
  vocab_size: 151936,
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  hidden_act: "silu",
  max_position_embeddings: 32768,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  tie_word_embeddings: true,
  use_sliding_window: false,
  sliding_window: 32768,
  max_window_layers: 21,
  bos_token_id: 151643,
  eos_token_id: 151643,
  torch_dtype: "bfloat16",
};
const smollm = {
  architectures: ["LlamaForCausalLM"],
  model_type: "llama",
  vocab_size: 49152,
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  hidden_act: "silu",
  max_position_embeddings: 8192,
  rms_norm_eps: 1e-5,
  rope_theta: 100000,
  rope_scaling: null,
  tie_word_embeddings: true,
  attention_bias: false,
  mlp_bias: false,
  pretraining_tp: 1,
  bos_token_id: 0,
  eos_token_id: 0,
};

const tiny: ModelConfig = {
  modelType: "llama",
  vocabSize: 11,
  hiddenSize: 8,
  intermediateSize: 12,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 2,
  rmsNormEps: 1e-5,
  ropeTheta: 10000,
  maxPositionEmbeddings: 64,
  tieWordEmbeddings: false,
  attentionBias: false,
};

test("parses a Qwen2.5-style config.json", () => {
  assert.deepEqual(parseHfConfig(qwen25), {
    modelType: "qwen2",
    vocabSize: 151936,
    hiddenSize: 896,
    intermediateSize: 4864,
    numLayers: 24,
    numHeads: 14,
    numKvHeads: 2,
    headDim: 64,
    rmsNormEps: 1e-6,
    ropeTheta: 1e6,
    maxPositionEmbeddings: 32768,
    tieWordEmbeddings: true,
    attentionBias: true,
    bosTokenId: 151643,
    eosTokenId: 151643,
  });
});

test("parses SmolLM2 (llama) and Mistral-style configs as llama, with transformers' defaults", () => {
  const s = parseHfConfig(smollm);
  assert.equal(s.modelType, "llama");
  assert.equal(s.headDim, 64);
  assert.equal(s.numKvHeads, 3);
  assert.equal(s.attentionBias, false);
  const m = parseHfConfig({
    model_type: "mistral",
    vocab_size: 32,
    hidden_size: 16,
    intermediate_size: 32,
    num_hidden_layers: 1,
    num_attention_heads: 4,
    sliding_window: null,
  });
  assert.equal(m.modelType, "llama");
  assert.equal(m.numKvHeads, 4, "num_key_value_heads defaults to num_attention_heads");
  assert.equal(m.headDim, 4);
  assert.equal(m.ropeTheta, 10000);
  assert.equal(m.maxPositionEmbeddings, 2048);
  assert.equal(m.tieWordEmbeddings, false);
  // explicit head_dim different from hidden/heads; rope_parameters (transformers 5)
  const h = parseHfConfig({ ...smollm, head_dim: 32, rope_parameters: { rope_type: "default", rope_theta: 5e5 } });
  assert.equal(h.headDim, 32);
  assert.equal(h.ropeTheta, 5e5);
});

test("unsupported or invalid values fail naming the file and field", () => {
  const f = "ckpt/config.json";
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...smollm, rope_scaling: { rope_type: "llama3", factor: 8 } }, /ckpt\/config\.json at rope_scaling: rope scaling type "llama3" is not supported/],
    [{ ...smollm, rope_scaling: { type: "linear", factor: 2 } }, /at rope_scaling: rope scaling type "linear"/],
    [{ ...smollm, rope_parameters: { rope_type: "yarn" } }, /at rope_parameters: rope scaling type "yarn"/],
    [{ ...smollm, model_type: "gpt2" }, /at model_type: "gpt2" is not supported .*llama, qwen2, mistral/],
    [{ ...smollm, model_type: undefined }, /at model_type: missing/],
    [{ ...smollm, hidden_size: undefined }, /ckpt\/config\.json at hidden_size: missing/],
    [{ ...smollm, vocab_size: "49152" }, /at vocab_size: expected a positive integer, got "49152"/],
    [{ ...smollm, num_key_value_heads: 2 }, /at num_key_value_heads: 2 must divide num_attention_heads \(9\)/],
    [{ ...smollm, hidden_act: "gelu" }, /at hidden_act: "gelu" is not supported/],
    [{ ...smollm, mlp_bias: true }, /at mlp_bias/],
    [{ ...smollm, attention_bias: true }, /at attention_bias: .*o_proj/],
    [{ ...qwen25, use_sliding_window: true }, /at use_sliding_window: sliding-window attention is not supported/],
    [{ ...smollm, model_type: "mistral", sliding_window: 4096 }, /at sliding_window: sliding-window attention \(4096\)/],
    [{ ...smollm, tie_word_embeddings: "yes" }, /at tie_word_embeddings: expected true or false/],
    [{ ...smollm, hidden_size: 577, head_dim: undefined }, /at head_dim: absent, and hidden_size 577 is not divisible/],
  ];
  for (const [json, re] of cases) assert.throws(() => parseHfConfig(json, f), re, JSON.stringify(json));
  assert.throws(() => parseHfConfig([1], f), /at \(root\): expected a JSON object/);
});

test("toHfConfig → parseHfConfig round-trips for llama and qwen2", () => {
  for (const cfg of [tiny, { ...tiny, modelType: "qwen2", attentionBias: true, tieWordEmbeddings: true, eosTokenId: 3 } satisfies ModelConfig]) {
    const json = toHfConfig(cfg);
    assert.equal(json.torch_dtype, "float32");
    assert.equal(json.hidden_act, "silu");
    assert.deepEqual(json.architectures, [cfg.modelType === "qwen2" ? "Qwen2ForCausalLM" : "LlamaForCausalLM"]);
    assert.deepEqual(parseHfConfig(JSON.parse(JSON.stringify(json))), cfg);
  }
  assert.deepEqual(parseHfConfig(toHfConfig(parseHfConfig(qwen25))), parseHfConfig(qwen25));
});

test("validateModelConfig rejects inconsistent configs", () => {
  assert.throws(() => validateModelConfig({ ...tiny, numKvHeads: 3 }), /numKvHeads: 3 must divide numHeads \(4\)/);
  assert.throws(() => validateModelConfig({ ...tiny, headDim: 3 }), /headDim: 3 must be even/);
  assert.throws(() => validateModelConfig({ ...tiny, attentionBias: true }), /attentionBias/);
  assert.throws(() => toHfConfig({ ...tiny, modelType: "qwen2" }), /attentionBias: qwen2 always has q\/k\/v biases/);
  assert.throws(() => validateModelConfig({ ...tiny, numLayers: 0 }), /numLayers: expected a positive integer/);
});

test("hfParamNames lists the Hugging Face tensors with [out, in] shapes", () => {
  const names = hfParamNames(tiny);
  assert.equal(names.length, 1 + 2 * 9 + 1 + 1);
  assert.deepEqual(names[0], { name: "model.embed_tokens.weight", shape: [11, 8] });
  const byName = new Map(names.map((p) => [p.name, p.shape]));
  assert.deepEqual(byName.get("model.layers.1.self_attn.q_proj.weight"), [8, 8]);
  assert.deepEqual(byName.get("model.layers.1.self_attn.k_proj.weight"), [4, 8]);
  assert.deepEqual(byName.get("model.layers.1.self_attn.v_proj.weight"), [4, 8]);
  assert.deepEqual(byName.get("model.layers.1.self_attn.o_proj.weight"), [8, 8]);
  assert.deepEqual(byName.get("model.layers.0.mlp.gate_proj.weight"), [12, 8]);
  assert.deepEqual(byName.get("model.layers.0.mlp.up_proj.weight"), [12, 8]);
  assert.deepEqual(byName.get("model.layers.0.mlp.down_proj.weight"), [8, 12]);
  assert.deepEqual(byName.get("model.layers.0.input_layernorm.weight"), [8]);
  assert.deepEqual(byName.get("model.layers.0.post_attention_layernorm.weight"), [8]);
  assert.deepEqual(byName.get("model.norm.weight"), [8]);
  assert.deepEqual(byName.get("lm_head.weight"), [11, 8]);
  assert.equal(names.filter((p) => p.name.endsWith(".bias")).length, 0);

  const q = hfParamNames({ ...tiny, modelType: "qwen2", attentionBias: true, tieWordEmbeddings: true, headDim: 4 });
  const qb = new Map(q.map((p) => [p.name, p.shape]));
  assert.equal(qb.has("lm_head.weight"), false);
  assert.deepEqual(qb.get("model.layers.0.self_attn.q_proj.weight"), [16, 8]);
  assert.deepEqual(qb.get("model.layers.0.self_attn.o_proj.weight"), [8, 16]);
  assert.deepEqual(qb.get("model.layers.0.self_attn.q_proj.bias"), [16]);
  assert.deepEqual(qb.get("model.layers.0.self_attn.k_proj.bias"), [8]);
  assert.deepEqual(qb.get("model.layers.0.self_attn.v_proj.bias"), [8]);
  assert.equal(qb.has("model.layers.0.self_attn.o_proj.bias"), false);
  // Parameter count of Qwen2.5-0.5B is the published 494M (0.49B).
  const total = hfParamNames(parseHfConfig(qwen25)).reduce((a, p) => a + p.shape.reduce((x, y) => x * y, 1), 0);
  assert.equal(total, 494032768);
});

test("writeHfConfig / readHfConfig", async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-cfg-"));
  await writeHfConfig(dir, tiny);
  assert.deepEqual(await readHfConfig(dir), tiny);
  assert.equal(JSON.parse(await readFile(join(dir, "config.json"), "utf8")).model_type, "llama");
  await writeFile(join(dir, "config.json"), "{oops");
  await assert.rejects(readHfConfig(dir), /config\.json: not valid JSON/);
  await assert.rejects(readHfConfig(join(dir, "nope")), /cannot read .*config\.json/);
});

// Optional: transformers loads our config.json + safetensors with no missing or unexpected keys.
// Runs when RLVR_TEST_PYTHON (or python3) has torch and transformers.
const py = process.env.RLVR_TEST_PYTHON ?? "python3";
const hasTransformers = spawnSync(py, ["-c", "import torch, transformers"], { encoding: "utf8" }).status === 0;

test("transformers loads toHfConfig + hfParamNames checkpoints strictly", { skip: hasTransformers ? false : `${py} lacks torch/transformers` }, async () => {
  for (const cfg of [tiny, { ...tiny, modelType: "qwen2", attentionBias: true, tieWordEmbeddings: true } satisfies ModelConfig]) {
    const dir = await mkdtemp(join(tmpdir(), "rlvr-hf-"));
    await writeHfConfig(dir, cfg);
    const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
    for (const p of hfParamNames(cfg)) {
      const n = p.shape.reduce((a, b) => a * b, 1);
      tensors[p.name] = { shape: p.shape, data: Float32Array.from({ length: n }, (_, i) => Math.sin(i + p.name.length)) };
    }
    await writeSafetensors(join(dir, "model.safetensors"), tensors, { format: "pt" });
    const script = `
import sys, json, torch
from transformers import AutoModelForCausalLM
m, info = AutoModelForCausalLM.from_pretrained(sys.argv[1], output_loading_info=True)
bad = {k: v for k, v in info.items() if v}
assert not bad, bad
assert m.dtype == torch.float32, m.dtype
print(type(m).__name__)
`;
    const r = spawnSync(py, ["-c", script, dir], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, cfg.modelType === "qwen2" ? /Qwen2ForCausalLM/ : /LlamaForCausalLM/);
  }
});
