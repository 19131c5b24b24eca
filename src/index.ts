/**
 * rlvr: reinforcement learning from verifiable rewards for language models, as a library.
 * Everything the CLI and a YAML config can do, a program can do with these functions; whatever a
 * program registers (a task, a reward, an advantage estimator, a policy loss, a method), a config can
 * name — directly, or through `plugins:` (docs/api.md).
 *
 *   import { defineTask, train } from "rlvr";
 *   defineTask({ name: "double", generate: ({ index }) => ({ prompt: `${index % 50}*2=`, answer: String(2 * (index % 50)) }), verify: (r, ex) => r.trim() === ex.answer });
 *   const run = await train({ model: { init: { hiddenSize: 64 } }, tokenizer: { type: "char", alphabet: "0123456789*=" }, data: { task: "double" }, rl: { steps: 30 } });
 *
 * Subpaths hold the full libraries: `rlvr/algorithms`, `rlvr/rewards`, `rlvr/engines`, `rlvr/tasks`.
 */

// Training: a run from a config, typed progress events, the config schema and plugins.
export { train, resolveConfig, planMemory, type TrainConfig, type TrainOptions } from "./api/train.ts";
export { estimateMemoryPlan, checkMemoryPlan, formatMemoryPlan, torchActivationBytes, embeddedPassBytes, type MemoryPlan, type PlanPart, type PlanShape, type PlanMachine } from "./trainer/plan.ts";
export { NonFiniteError, ResumeError, RewardError, RunDirError, RunInterrupted } from "./trainer/run.ts";
export { PeerError } from "./util/peer.ts";
export type { RunHooks } from "./trainer/session.ts";
export type { RunSummary } from "./trainer/stages.ts";
export type { Progress } from "./trainer/sft.ts";
export type { RunContext } from "./pipeline/context.ts";
export type { RlStageHooks } from "./pipeline/hooks.ts";
export type { TrainEvent, TrainEventHandler, StageEvent, MetricsEvent, SamplesEvent, EvalEvent, RunStage, MetricsStage, SftMetrics, RlMetrics } from "./trainer/events.ts";
export { ConfigError, loadRunConfig, parseRunConfig, runConfigSchema, type RunConfig, type RunConfigInput } from "./config/schema.ts";
export { loadPlugins, loadRunConfigFile, loadCommandPlugins, runConfigPath } from "./config/plugins.ts";

// Tasks: defineTask (built-in tasks register on import), datasets, prompts.
export { defineTask, type TaskSpec, type ExampleDraft, type TaskScore } from "./tasks/define.ts";
export type { Candidate } from "./tasks/split.ts";
export type { Rng } from "./tasks/rng.ts";
export { registerTask, getTask, hasTask, listTasks, generateExamples, loadDataset, renderPrompt, type Example, type Task } from "./tasks/index.ts";

// Rewards: the one verifier registry that a config's `reward: {verifier: <name>}` names.
export {
  defineReward,
  registerVerifier,
  getVerifier,
  hasVerifier,
  verifierNames,
  toVerdict,
  type Verifier,
  type Verdict,
  type VerifyContext,
  type VerifyFn,
  type RewardFunction,
  type RewardReturn,
} from "./rewards/registry.ts";

// Algorithms: the registries a config's rl.algorithm names, and the presets.
export {
  registerAdvantage,
  registerPolicyLoss,
  getAdvantage,
  getPolicyLoss,
  listAdvantages,
  listPolicyLosses,
  resolveAlgorithm,
  listPresets,
  type AdvantageEntry,
  type PolicyLossEntry,
  type AlgorithmConfig,
  type AlgorithmConfigInput,
} from "./algorithms/index.ts";

// Methods: a guided or label-free method as one object, enabled by name in a config's `methods:`.
export { HOOK_STAGES, defineMethod, getMethod, listMethods, type Method, type MethodNeeds, type MethodSpec, type MethodStage } from "./methods/index.ts";

// Engines: the contract and the factory.
export { openEngine, type OpenEngineOptions } from "./engines/open.ts";
// The real-model recipe (`rlvr quickstart --model`): GRPO on word problems in the model's chat template, full or LoRA (REAL_LORA).
export { runRealRecipe, realRecipeConfig, REAL_LORA, REAL_EVAL, type RealRecipeOptions, type RealRecipeResult } from "./recipes/real.ts";
export type { ModelSpec } from "./engines/open-kind.ts";
export { serve, trainServed, EpisodeStore, type ServeOptions, type Server, type CaptureTrainOptions, type CaptureStepReport, type Episode, type Turn } from "./serve/index.ts";
export { serveTinker, type TinkerServer, type TinkerServerOptions } from "./tinker/server.ts";
export { tinkerLoss, registerTinkerLoss, getTinkerLoss, listTinkerLosses, type TinkerLossInputs, type TinkerLossOutput, type TinkerLossEntry } from "./algorithms/losses/tinker.ts";
export type { Engine, EngineInfo, SampleRequest, SampleResult, TokenBatch, TokenScores, TokenLossFn, LossOutput, LossReport, OptimStep, Sampler, ForwardBackwardOptions } from "./core/engine.ts";
export { loadTokenizer, CharTokenizer, HfTokenizer, promptEncoder, promptIds, chatPromptIds, type Tokenizer, type PromptFormat } from "./tokenizers/index.ts";

// Evaluation: held-out accuracy with pass@k / maj@k, and the estimators.
export { evaluate, type EvalOptions, type EvalResult } from "./eval/accuracy.ts";
export { evaluateCheckpoint, type EvaluateCheckpointOptions } from "./trainer/evaluate.ts";
export type { EvalSummary, PromptOutcome, SampleOutcome } from "./eval/summary.ts";
export type { Interval } from "./eval/bootstrap.ts";
export { passAtK, kValues } from "./eval/passk.ts";
export { plotRuns, renderLineChart, readMetricSeries, readPassAtK, type PlotRunsOptions, type PlotSeries } from "./eval/plot.ts";
export { majAtK, majorityIndex, type Vote } from "./eval/majority.ts";
export { summarize, breakdown, type SummaryOptions } from "./eval/summary.ts";
export { compareResults, passAtKCurve, type Comparison, type PassAtKCurve } from "./eval/compare.ts";
export { formatReport, formatComparison, asciiCurve } from "./eval/report.ts";
// Tools of the multi-turn agent loop (rl.agent.tools names them).
export { registerTool, type Tool } from "./rollout/tools/registry.ts";
// Environments (docs/envs.md): multi-turn episodes as a rollout source beside tasks.
export { defineEnv, envGroup, getEnv, hasEnv, listEnvs, messageEnv, type Env, type EnvDefinition, type EnvEpisode, type EnvGroup, type EnvGroupSpec, type EnvStep, type InitialObservation, type StopCondition, type MessageEpisode, type MessageStep } from "./envs/index.ts";
export { envRollouts, type EnvRolloutOptions, type EnvRolloutResult } from "./rollout/env.ts";
// The rl.agent tool loop as an Env (docs/rollouts.md).
export { ToolEnv, agentRollouts, type AgentOptions, type AgentResult } from "./rollout/agent.ts";
