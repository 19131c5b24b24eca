/**
 * Typed progress events of a training run, for programs that drive `train()`:
 *
 *   await train(cfg, { onEvent: (e) => { if (e.type === "metrics" && e.stage === "rl") console.log(e.step, e.metrics["reward/mean"]); } });
 *
 * The events carry exactly what the run directory records: every metrics.jsonl record (one per
 * optimizer step of every stage, plus checks), every samples.jsonl batch, every eval.jsonl
 * evaluation, and the stage changes `rlvr train` prints. A handler runs synchronously inside the
 * training loop: keep it short (queue heavy work), and a handler that throws stops the run.
 */
import type { EvalResult } from "../eval/accuracy.ts";
import { RunLogger } from "../pipeline/logger.ts";

/** The stages a run announces, in the order they can come (`RunHooks.stage`, StageEvent). */
export type RunStage = "setup" | "resume" | "eval" | "sft" | "rl" | "checkpoint" | "save";

/** A stage started. */
export interface StageEvent {
  type: "stage";
  stage: RunStage;
  /** e.g. "200 steps", "before RL", "stopped at step 165: …". */
  detail?: string;
}

/**
 * An SFT step's numbers (docs/runs.md): every optimizer step has the step fields; a `sft.stopAt`
 * check record has only `check/accuracy` and `check/stopped`. Other numeric keys may follow.
 */
export type SftMetrics = Partial<Record<"loss" | "nll" | "lr" | "grad_norm" | "skipped" | "tokens" | "step_time" | "check/accuracy" | "check/stopped", number>> & Record<string, number>;

/**
 * An RL step's numbers (docs/runs.md lists them all): the ones every step logs are typed; per-component
 * (`reward/<name>`), per-method and per-stage keys are there by name too.
 */
export type RlMetrics = Record<
  | "reward/mean" | "reward/verifier" | "accuracy" | "entropy" | "kl" | "kl_coef" | "loss/policy" | "clipfrac_low" | "clipfrac_high"
  | "grad_norm" | "updates" | "response/length_mean" | "response/length_max" | "response/truncated_frac" | "groups/zero_std_frac"
  | "verifier/errors" | "verifier/timeouts" | "verifier/crashes" | "time/step",
  number
> &
  Record<string, number>;

/** One metrics.jsonl record (one per optimizer step of each stage, plus checks), by its stage. */
export type MetricsEvent =
  | { type: "metrics"; stage: "sft"; step: number; metrics: SftMetrics }
  | { type: "metrics"; stage: "rl"; step: number; metrics: RlMetrics }
  /** ReLIFT's SFT steps between RL steps (src/methods/relift.ts); `step` is the RL step. */
  | { type: "metrics"; stage: "relift-sft"; step: number; metrics: Record<string, number> };

/** Stages whose records metrics.jsonl holds. */
export type MetricsStage = MetricsEvent["stage"];

/** A few rollouts of a step, as written to samples.jsonl (prompt, response, reward, …). */
export interface SamplesEvent {
  type: "samples";
  samples: Record<string, unknown>[];
}

/** A held-out evaluation, as appended to eval.jsonl ("init", "sft" before RL, "rl" during and after). */
export interface EvalEvent {
  type: "eval";
  label: string;
  /** RL step of the evaluation (0 before RL). */
  step: number;
  result: EvalResult;
}

export type TrainEvent = StageEvent | MetricsEvent | SamplesEvent | EvalEvent;
export type TrainEventHandler = (event: TrainEvent) => void;

/** The run logger that also hands each record to an event handler (when one is given). */
export class EventLogger extends RunLogger {
  constructor(dir: string, quiet: boolean | undefined, private readonly onEvent?: TrainEventHandler) {
    super(dir, quiet);
  }

  override metrics(record: Record<string, unknown>): void {
    super.metrics(record);
    if (!this.onEvent) return;
    const metrics: Record<string, number> = {};
    for (const [k, v] of Object.entries(record)) if (typeof v === "number" && k !== "step") metrics[k] = v;
    this.onEvent({ type: "metrics", stage: String(record["stage"] ?? "") as MetricsStage, step: Number(record["step"] ?? 0), metrics } as MetricsEvent);
  }

  override samples(records: Record<string, unknown>[]): void {
    super.samples(records);
    if (this.onEvent && records.length > 0) this.onEvent({ type: "samples", samples: records });
  }
}
