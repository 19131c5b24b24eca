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
import { RunLogger } from "./logger.ts";

/** A stage started: "setup", "resume", "eval", "sft", "rl", "checkpoint", "save". */
export interface StageEvent {
  type: "stage";
  stage: string;
  /** e.g. "200 steps", "before RL", "stopped at step 165: …". */
  detail?: string;
}

/** One metrics.jsonl record: the step's numbers (loss, reward/mean, kl, entropy, time/step, …). */
export interface MetricsEvent {
  type: "metrics";
  /** "sft", "rl", or a method's own stage (e.g. "relift-sft"). */
  stage: string;
  step: number;
  /** The record's numeric fields, by metric name (docs/runs.md lists them). */
  metrics: Record<string, number>;
}

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
    this.onEvent({ type: "metrics", stage: String(record["stage"] ?? ""), step: Number(record["step"] ?? 0), metrics });
  }

  override samples(records: Record<string, unknown>[]): void {
    super.samples(records);
    if (this.onEvent && records.length > 0) this.onEvent({ type: "samples", samples: records });
  }
}
