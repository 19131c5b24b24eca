/**
 * The engine contract: the only API the training loop uses to touch a model.
 *
 * TypeScript owns every formula; an engine owns the tensors. An engine samples tokens, scores
 * tokens (per-token log-probs and entropy), back-propagates cotangents that a TypeScript loss
 * computed, and steps an optimizer. See docs/architecture.md ("The engine contract").
 *
 * Layout conventions used by every field below:
 * - A `TokenBatch` holds B sequences padded to a common length T, stored row-major as flat
 *   arrays of length B*T. Index `b*T + t` is token t of sequence b.
 * - Per-token values (log-probs, entropy, masks, advantages) are aligned with the token they
 *   describe: `logprobs[b*T+t] = log p(tokens[b*T+t] | tokens[b*T+0 .. b*T+t-1])`. Position 0 of
 *   every sequence has no prediction and holds 0.
 * - Log-probs are natural-log nats; entropy is in nats; lengths are in tokens.
 */

/** Static facts about the loaded model. */
export interface EngineInfo {
  /** Engine kind, e.g. "embedded" or "torch". */
  engine: string;
  /** Human-readable model id (directory or name). */
  modelId: string;
  /** Vocabulary size V of the logits. */
  vocabSize: number;
  /** Longest sequence (prompt + response, tokens) the model accepts. */
  maxSeqLen: number;
  /** Number of trainable parameters. */
  numParams: number;
  /** Where the tensors live, e.g. "cpu (wasm, 2 threads)" or "cuda:0". */
  device: string;
  /** Parameter dtype, e.g. "float32" or "bfloat16". */
  dtype: string;
}

/** How to sample continuations. */
export interface SampleRequest {
  /** Prompt token ids, one array per prompt (variable lengths allowed). */
  prompts: Int32Array[];
  /** Samples per prompt (the group size). Results are prompt-major: prompt i, sample j at i*n+j. */
  n: number;
  /** Maximum new tokens per sample. */
  maxNewTokens: number;
  /** Softmax temperature (> 0). 0 selects greedy decoding. */
  temperature: number;
  /** Nucleus sampling: keep the smallest set of tokens with cumulative probability >= topP (1 = off). */
  topP?: number;
  /** Keep only the topK most likely tokens (0 = off). */
  topK?: number;
  /** Token ids that end a sample (included in the output, as in Hugging Face `generate`). */
  stopTokens?: number[];
  /** Seed of the sampler's random stream; the same seed and inputs give the same samples. */
  seed: number;
}

/** Why a sampled response ended. */
export type StopReason = "completed" | "max_tokens" | "max_turns" | "tool_stopped" | "parse_error" | "timeout";

/** One sampled response. */
export interface SampleResult {
  /** Index of the prompt in `SampleRequest.prompts`. */
  promptIndex: number;
  /** Response token ids (excluding the prompt), including the stop token when one was hit. */
  tokens: Int32Array;
  /**
   * Log-prob of each sampled token under the sampling distribution actually used (after
   * temperature; before top-p/top-k truncation, as verl and vLLM report), nats, [tokens.length].
   */
  logprobs: Float32Array;
  /** `completed` if a stop token ended it, `max_tokens` if it ran out of budget. */
  stopReason: StopReason;
}

/** A padded batch of token sequences plus the per-token data a loss needs. All arrays are [B*T]. */
export interface TokenBatch {
  /** Number of sequences B. */
  batchSize: number;
  /** Padded length T. */
  seqLen: number;
  /** Token ids, padded with any valid id past each sequence's length. */
  tokens: Int32Array;
  /** Real length of each sequence, [B]; positions >= length are padding and never attended to. */
  lengths: Int32Array;
  /** 1 on tokens whose log-prob is trained (response tokens), else 0. [B*T] */
  lossMask: Float32Array;
  /** Group id of each sequence, [B] (responses to one prompt share a group). */
  groupIds?: Int32Array;
  /** Per-token advantage (sequence advantage broadcast over its tokens), [B*T]. */
  advantages?: Float32Array;
  /** Log-probs under the behaviour policy (before this update), nats, [B*T]. */
  oldLogprobs?: Float32Array;
  /** Log-probs under the sampler (engine that generated; may differ from the trainer), [B*T]. */
  samplerLogprobs?: Float32Array;
  /** Log-probs under the reference policy, nats, [B*T]. */
  refLogprobs?: Float32Array;
  /** Per-token weights for supervised terms (e.g. SFT on demonstrations), [B*T]. */
  weights?: Float32Array;
}

/** Per-token scores computed by an engine. */
export interface TokenScores {
  /** Log-prob of each token given its prefix, nats, [B*T] (0 at t = 0 and on padding). */
  logprobs: Float32Array;
  /** Entropy of the next-token distribution that predicted each token, nats, [B*T] (when asked). */
  entropy?: Float32Array;
}

/** Result of a TypeScript loss: its value and its cotangents with respect to the engine's outputs. */
export interface LossOutput {
  /** Scalar loss contributed by this (micro-)batch. Losses of micro-batches add up to the step loss. */
  loss: number;
  /** dL/dlogprobs, [B*T]. */
  dLogprobs: Float32Array;
  /** dL/dentropy, [B*T]; omit when the loss does not depend on entropy. */
  dEntropy?: Float32Array;
  /** Scalar diagnostics (clip fractions, ratio stats, KL, ...). Summed or averaged by the caller. */
  metrics: Record<string, number>;
}

/**
 * A loss written in TypeScript. The engine calls it with the scores it computed on `batch` (with
 * a graph kept), then back-propagates `dLogprobs` (and `dEntropy`) into the parameters' gradients.
 */
export type TokenLossFn = (scores: TokenScores, batch: TokenBatch) => LossOutput;

/** Options of `Engine.forwardBackward`. */
export interface ForwardBackwardOptions {
  /** Compute the entropy of each next-token distribution too (the loss returns dEntropy). */
  entropy?: boolean;
  /** The loss reads scores only where lossMask is 1; positions before the batch's first such token may come back 0. */
  trainedOnly?: boolean;
}

/**
 * Index of the batch's first trained position: the smallest t with lossMask[b*T + t] > 0 over
 * rows b (T when no token is trained). Positions before it are prompt tokens of every row.
 */
export function firstTrainedPosition(batch: TokenBatch): number {
  const T = batch.seqLen;
  let first = T;
  for (let b = 0; b < batch.batchSize && first > 0; b++) {
    for (let t = 0; t < first; t++) {
      if (batch.lossMask[b * T + t]! > 0) {
        first = t;
        break;
      }
    }
  }
  return first;
}

/** What `forwardBackward` reports. */
export interface LossReport {
  loss: number;
  metrics: Record<string, number>;
  /** Number of tokens with lossMask 1 in the batch. */
  tokens: number;
}

/** One optimizer step (AdamW). */
export interface OptimStep {
  /** Learning rate for this step (the caller applies the schedule). */
  lr: number;
  /** Clip the global L2 norm of the accumulated gradient to this value (0 or undefined = off). */
  maxGradNorm?: number;
  /** Decoupled weight decay coefficient (AdamW). Default 0. */
  weightDecay?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
}

/** A checkpoint directory to load a reference model from. */
export interface CheckpointRef {
  dir: string;
}

export interface Engine {
  /** Static facts about the model. */
  info(): EngineInfo;
  /** Sample `n` responses per prompt. Returns prompts.length * n results, prompt-major. */
  sample(req: SampleRequest): Promise<SampleResult[]>;
  /** Per-token log-probs (and entropy when asked) of `batch` under the policy or reference model. No gradients. */
  score(batch: TokenBatch, opts: { model: "policy" | "reference"; entropy?: boolean }): Promise<TokenScores>;
  /**
   * Computes log-probs (and entropy when `opts.entropy`) with a graph, calls `loss`, then
   * back-propagates its cotangents. Gradients accumulate across calls until `optimStep`.
   * `opts.trainedOnly`: the loss reads scores only at trained positions (lossMask 1), so an engine
   * may skip positions before the batch's first trained token (prompt tokens) and report 0 there
   * (the torch engine then runs its output head over responses only).
   */
  forwardBackward(batch: TokenBatch, loss: TokenLossFn, opts?: ForwardBackwardOptions): Promise<LossReport>;
  /** Apply and clear the accumulated gradients. Returns the global gradient norm before clipping. */
  optimStep(opt: OptimStep): Promise<{ gradNorm: number; skipped: boolean }>;
  /** Freeze a copy of the policy (or a checkpoint) as the reference model. */
  setReference(from: "policy" | CheckpointRef): Promise<void>;
  /** Write the model (Hugging Face layout) and optimizer state to `dir`. */
  save(dir: string, opts?: { optimizer?: boolean }): Promise<void>;
  /** Load the model (and optimizer state when present) from `dir`. */
  load(dir: string): Promise<void>;
  /** Release all resources. */
  close(): Promise<void>;
}

/**
 * A rollout sampler apart from the trainer (round 2): vLLM (colocated or servers), an
 * OpenAI-compatible endpoint, or the trainer engine itself. The RL step's collect stage samples
 * through `RunContext.sampler` when one is set, else through the engine.
 *
 * Every result's `logprobs` are the sampler's own (its numerics may differ from the trainer's);
 * the trainer re-scores the tokens when the sampler is not the trainer (mismatch correction uses
 * both). `policyVersion` counts the optimizer updates whose weights the sampler held when it
 * sampled (0 = the initial weights).
 */
export interface Sampler {
  /** Short name for logs and metrics, e.g. "vllm-colocated", "vllm-server", "openai". */
  readonly name: string;
  /**
   * True when the sampler computes the trainer's own numerics for the weights it holds (a copy of
   * the embedded engine): its log-probs are then the behaviour policy's exactly and the trainer
   * does not re-score its tokens (a stale batch is corrected by the PPO ratio and clip).
   */
  readonly exact?: boolean;
  /** Sample `n` responses per prompt; prompt-major results, as `Engine.sample`. */
  sample(req: SampleRequest): Promise<SampleResult[]>;
  /**
   * Bring the sampler's weights up to the trainer's after an optimizer update.
   * @param engine the trainer engine holding the new weights
   * @param policyVersion the version those weights are (number of optimizer updates so far)
   * @returns seconds spent syncing
   */
  syncWeights?(engine: Engine, policyVersion: number): Promise<number>;
  /** The policy version of the weights the sampler holds now. */
  version?(): number;
  /** Release servers, processes and memory. */
  close?(): Promise<void>;
}
