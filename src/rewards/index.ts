/**
 * The reward layer: verifiers, length shaping, composition and the isolated verifier pool.
 * The math answer verifier lives in ./math (docs/rewards-math.md); it is reached lazily through
 * ./math-bridge.ts so that this barrel loads without its CAS.
 */
export type { Verdict, RewardGroup, RewardEvent } from "./types.ts";
export {
  registerVerifier,
  getVerifier,
  findVerifier,
  hasVerifier,
  verifierNames,
  defineReward,
  toVerdict,
  type Verifier,
  type VerifyContext,
  type GroupVerifyContext,
  type VerifyFn,
  type RewardFunction,
  type RewardReturn,
} from "./registry.ts";
export { BUILTIN_VERIFIERS, preloadMath } from "./verifiers.ts";
export { exampleIssue, fieldPath, referenceAnswerSchema, choiceExampleSchema, formatExampleSchema, type ExampleIssue } from "./example-schema.ts";
export { auditReward, formatAuditReport, ATTACKS, ATTACK_NAMES, isReferenceAnswer, type Attack, type AttackCategory, type AuditFinding, type AuditReport, type AuditOptions } from "./audit/index.ts";
export { mathExampleSchema } from "./math-bridge.ts";
export { rewardConfigSchema, resolveRewardConfig, type RewardConfig, type RewardConfigInput } from "./config.ts";
export { compileReward, rewardMetrics, type CompiledReward, type CompileOptions, type BatchInfo, type ScoredBatch, type RewardExampleIssue } from "./compile.ts";
export { loadRewardExport, moduleSpecifierOf, rewardExportSchema, type ModuleOptions } from "./user-module.ts";
export { verifyChoice, extractChoice, type ChoiceOptions } from "./choice.ts";
export { verifyExactMatch, verifyTokenF1, tokenF1, type ShortAnswerOptions } from "./exact.ts";
export { verifyFormat, compileTemplate, type FormatOptions } from "./format.ts";
export { normalizeAnswer, lastBoxed, lastTag, answerSpan } from "./text.ts";
export {
  verifyConstraints,
  fromIFEval,
  readConstraints,
  ifevalExampleSchema,
  ConstraintDataError,
  gateReason,
  type GateOptions,
  registerConstraint,
  getConstraint,
  listConstraints,
  type Constraint,
  type ConstraintChecker,
  type ConstraintResult,
  type ConstraintsVerdict,
} from "./ifeval/index.ts";
export { runCodeTests, runCodeSpec, extractCode, type CodeTest, type CodeRunOptions, type CodeResult, type CodeCaseResult } from "./code/run-tests.ts";
export { parseCodeTest, parseCodeTests, parseCodeJson, codeTestSchema, stdioTestSchema, callTestSchema, assertTestSchema, CodeTestError } from "./code/forms.ts";
export { codeSpecOf, solutionCode, codeFieldsOf, codeExampleSchema, unpickleString, CODE_FORMATS, type CodeFormat, type CodeSpec } from "./code/formats.ts";
export { runSandboxed, makeWorkdir, sandboxCommand, setSandboxConcurrency, abortSandboxes, reclaimThreadSandboxes, DEFAULT_LIMITS, type SandboxLimits, type SandboxResult, type SandboxSpec, type Language } from "./code/sandbox.ts";
export { sandboxSupport, type SandboxSupport } from "./code/probe.ts";
export { sandboxSlotsBuffer, adoptSandboxSlots, slotsInUse } from "./code/slots.ts";
export { judgeVerify, parseJudgeReply, judgePrompt, encodeAnswer, JudgeError, judgeStats, judgeOptionsSchema, type JudgeOptions, type JudgeReading } from "./judge.ts";
export { dapoOverlongPenalty, type OverlongOptions } from "./shaping/overlong.ts";
export { cosineLengthReward, cosFn, type CosineLengthOptions } from "./shaping/cosine.ts";
export { grpoLambdaRewards, grpoLambdaSelect, grpoLambdaComponent, kimiLengthReward, type GrpoLambdaOptions, type GrpoLambdaGroup } from "./shaping/grpo-lambda.ts";
export {
  composeRewards,
  countEvents,
  toValue,
  type RewardSpec,
  type RewardComponent,
  type RewardFn,
  type RewardOutput,
  type RewardValue,
  type SampleContext,
  type GroupContext,
  type BatchContext,
} from "./compose.ts";
export { poolComponent, sampleComponent, majorityVoteComponent, overlongComponent, cosineComponent } from "./components.ts";
export { VerifierPool, createVerifierPool, defaultScore, type PoolOptions, type PoolOutcome, type PoolStats } from "./pool/pool.ts";
export { loadMath, loadMathAudit, verifyMathLazy, type MathVerdictLike, type MathAuditLike } from "./math-bridge.ts";
