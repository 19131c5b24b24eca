/**
 * rlvr in a browser tab (dashboard/train.html): the quickstart's run — a character-level
 * Llama-style model SFT-warmed on fixed-width addition, then trained with GRPO against the
 * addition verifier — driven step by step from the page, with no file system.
 *
 * Nothing here is a copy of the Node trainer: the config is `quickstartConfig` (the recipe of
 * `npm start`), validated by `parseRunConfig`; the context (tokenizer, embedded engine, data,
 * verifier) comes from `buildContext`; each SFT step is `sftStep` (and `sftStopCheck`, the run's
 * sft.stopAt check), each RL step the pipeline's `rlStep` (collect, then the update sequence of
 * src/pipeline/update.ts: reward → reference → advantages → optimize → metrics); held-out accuracy
 * is `evaluate` with the run's eval settings; the download is `checkpointFiles` (the bytes
 * `saveCheckpoint` writes). Only the run directory is replaced: the records that Node appends to
 * metrics.jsonl / samples.jsonl / eval.jsonl go to the page's callbacks instead.
 *
 * With a pretrained model (`rlvr play --model`, `PlaySession.openModel`) the run is the real-model
 * recipe's instead (src/recipes/real.ts: word problems rendered through the model's own chat
 * template, GRPO) at a tab's size, as a LoRA on a bfloat16 frozen base: the page fetches the model
 * directory's files and `buildContext` builds the tokenizer and the embedded engine from those bytes.
 *
 * The same module runs under Node (test/browser/session.test.ts), where jax-js runs on Wasm.
 */
import { parseRunConfig, type RunConfig } from "../config/schema.ts";
import { quickstartConfig } from "../recipes/quickstart.ts";
import { REAL_LORA, realRecipeConfig } from "../recipes/real.ts";
import type { ModelFiles } from "../engines/embedded/hf-config.ts";
import { buildContext } from "../trainer/context.ts";
import type { RunContext } from "../pipeline/context.ts";
import type { RunLogger } from "../pipeline/logger.ts";
import { initSftState, sftStep, sftStopCheck, type SftState } from "../trainer/sft.ts";
import { initRlState, type RlState } from "../pipeline/state.ts";
import { rlStep } from "../pipeline/step.ts";
import { evaluate, type EvalResult } from "../eval/accuracy.ts";
import { checkpointFiles } from "../engines/embedded/checkpoint.ts";
import type { EmbeddedEngine } from "../engines/embedded/engine.ts";
import { jaxDevice, useJaxBackend, type JaxBackend } from "../engines/embedded/runtime.ts";

/** What a visitor (or a test, through the page's URL) may change of the quickstart's run. */
export interface PlaySettings {
  seed: number;
  /** Digits per operand (the task's difficulty; the quickstart uses 2). */
  digits: number;
  /** SFT warm-up steps at most (it stops earlier at `stopAt` greedy accuracy on the check set). */
  sftSteps: number;
  /** SFT examples per step. */
  sftBatch: number;
  /** Greedy check-set accuracy that ends the warm-up (0 = run every SFT step). */
  stopAt: number;
  /** GRPO steps. */
  rlSteps: number;
  /** Prompts per GRPO step and responses per prompt (the group). */
  promptsPerStep: number;
  groupSize: number;
  /** Held-out prompts evaluated before and after RL, and samples per prompt at temperature 1. */
  evalPrompts: number;
  evalSamples: number;
  /** Generated training examples (the quickstart writes 20,000). */
  trainSize: number;
}

/** The quickstart's settings (`npm start`). */
export const QUICKSTART_PLAY: PlaySettings = {
  seed: 1,
  digits: 2,
  sftSteps: 300,
  sftBatch: 128,
  stopAt: 0.3,
  rlSteps: 300,
  promptsPerStep: 128,
  groupSize: 4,
  evalPrompts: 256,
  evalSamples: 4,
  trainSize: 20000,
};

/** What a visitor (or a test) may change of a pretrained model's run in the tab (`rlvr play --model`). */
export interface ModelPlaySettings {
  seed: number;
  /** GRPO steps. */
  rlSteps: number;
  /** Prompts per GRPO step and responses per prompt (the group). */
  promptsPerStep: number;
  groupSize: number;
  /** Response budget in tokens (sampling and the held-out evaluation). */
  maxNewTokens: number;
  /** Held-out prompts decoded greedily before and after GRPO. */
  evalPrompts: number;
  /** LoRA rank (alpha = 2 × rank; every linear module of each block). */
  loraRank: number;
  /** AdamW learning rate of the adapters (constant; no warm-up). */
  lr: number;
  /**
   * Entropy bonus coefficient (algorithm.entropy.coef; 0 = the recipe's GRPO). A small one gives
   * every step a gradient even when each group's responses all score the same (zero advantages).
   */
  entropyCoef: number;
  /** Word-problem difficulty (1: one event, single-digit numbers; the recipe's). */
  difficulty: number;
  /** Generated training examples. */
  trainSize: number;
}

/**
 * A tab's size of the real-model recipe: 2 prompts × 4 samples × 48 tokens a step, rank-8 LoRA at
 * the recipe's LoRA rate (REAL_LORA.lr, 1e-3: 100× its full fine-tune's, as LoRA wants), 8 held-out
 * prompts decoded greedily.
 */
export const MODEL_PLAY: ModelPlaySettings = {
  seed: 1,
  rlSteps: 20,
  promptsPerStep: 2,
  groupSize: 4,
  maxNewTokens: 48,
  evalPrompts: 8,
  loraRank: 8,
  lr: REAL_LORA.lr,
  entropyCoef: 0,
  difficulty: 1,
  trainSize: 1000,
};

/**
 * The run config of a pretrained model's play session: `realRecipeConfig` (the recipe of
 * `rlvr quickstart --model`) on the embedded engine, the word problems generated in memory and
 * rendered through the model's chat template, LoRA on a bfloat16 frozen base, greedy evaluation.
 * @param model names the model (its catalogue name or directory); the files come to buildContext as bytes
 * @throws a `config error at …` line for an impossible setting
 */
export function modelPlayConfig(s: ModelPlaySettings, model: string): RunConfig {
  const r = realRecipeConfig({ out: "(browser)", modelPath: model, engine: "embedded", steps: s.rlSteps, seed: s.seed }, "", "");
  const alg = r.rl!.algorithm;
  return parseRunConfig(
    {
      ...r,
      model: { ...r.model, lora: { rank: s.loraRank, alpha: 2 * s.loraRank, baseDtype: "bfloat16" } },
      data: { task: "word-problems", difficulty: s.difficulty, trainSize: s.trainSize, testSize: s.evalPrompts, chat: true },
      rl: { ...r.rl!, promptsPerStep: s.promptsPerStep, groupSize: s.groupSize, maxNewTokens: s.maxNewTokens, lr: s.lr, warmupSteps: 0, algorithm: { ...(typeof alg === "string" ? { preset: alg } : alg), entropy: { coef: s.entropyCoef } } },
      eval: { every: 0, temperature: 0, samples: 1, greedy: false, maxNewTokens: s.maxNewTokens },
    },
    "browser",
  );
}

/** Callbacks of a session: the records Node writes to a run directory, as they happen. */
export interface PlayEvents {
  /** One metrics.jsonl record ({stage, step, ...numbers}). */
  metrics?: (record: Record<string, unknown>) => void;
  /** One step's samples.jsonl records. */
  samples?: (records: Record<string, unknown>[]) => void;
  /** One eval.jsonl record ({label, step, ...EvalResult}). */
  eval?: (record: { label: string; step: number } & EvalResult) => void;
  /** A stage starts ("setup", "eval", "sft", "rl", "done") with a line for the status bar. */
  stage?: (name: string, detail: string) => void;
  /** After each GRPO step (awaited before the next): e.g. a test's look at the weights. */
  rlStepDone?: (step: number) => void | Promise<void>;
}

/**
 * The run config of a play session: `quickstartConfig` with the task generated in memory (no
 * data files) and the sizes of `s`. @throws a `config error at …` line for an impossible setting.
 */
export function playConfig(s: PlaySettings): RunConfig {
  const q = quickstartConfig({ out: "(browser)", digits: s.digits, sftSteps: s.sftSteps, rlSteps: s.rlSteps, seed: s.seed }, "", "");
  const checkPrompts = Math.min(q.sft!.stopAt!.prompts ?? 256, Math.floor(s.trainSize / 4));
  return parseRunConfig(
    {
      ...q,
      model: { ...q.model, engine: "embedded" }, // jax-js: the only engine a browser can run
      data: { task: "addition-padded", difficulty: s.digits, trainSize: s.trainSize, testSize: s.evalPrompts },
      sft: { ...q.sft!, steps: s.sftSteps, batchSize: s.sftBatch, ...(s.stopAt > 0 ? { stopAt: { ...q.sft!.stopAt!, accuracy: s.stopAt, prompts: checkPrompts } } : { stopAt: undefined }) },
      rl: { ...q.rl!, steps: s.rlSteps, promptsPerStep: s.promptsPerStep, groupSize: s.groupSize },
      eval: { ...q.eval!, samples: s.evalSamples },
    },
    "browser",
  );
}

/** Yield to the event loop, so that a page repaints its curves between steps. */
const pause = () => new Promise<void>((ok) => setTimeout(ok, 0));

/** The logger the pipeline writes to, forwarding to the page instead of appending to files. */
function eventLogger(ev: PlayEvents): RunLogger {
  const log: Pick<RunLogger, "metrics" | "samples" | "info"> = {
    metrics: (r) => ev.metrics?.({ time: new Date().toISOString(), ...r }),
    samples: (rs) => {
      if (rs.length) ev.samples?.(rs);
    },
    info: () => {},
  };
  // RunLogger's only other members are its directory and a private flag, which the pipeline never reads.
  return log as RunLogger;
}

/** One training run in the tab: open, then `run()` (or the stages one by one), then `checkpoint()`. */
export class PlaySession {
  readonly log: RunLogger;
  readonly sft: SftState;
  rl: RlState | null = null;
  readonly evals: Record<string, EvalResult> = {};
  private stopped = false;

  private constructor(
    readonly cfg: RunConfig,
    readonly ctx: RunContext,
    private ev: PlayEvents,
  ) {
    this.log = eventLogger(ev);
    this.sft = initSftState(ctx);
    this.reportEngineCalls();
  }

  private stageNow: [string, string] = ["setup", ""];

  /** Status lines inside a stage: each engine call (sampling, scoring, training) says it starts, after the stage's own line. */
  private reportEngineCalls(): void {
    const stage = this.ev.stage;
    if (!stage) return;
    this.ev = { ...this.ev, stage: (name, detail) => void ((this.stageNow = [name, detail]), stage(name, detail)) };
    const e = this.ctx.engine as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    const calls = { sample: "sampling", score: "scoring", forwardBackward: "training (forward and backward)", optimStep: "AdamW step" } as const;
    for (const [m, what] of Object.entries(calls)) {
      const f = e[m]!.bind(this.ctx.engine);
      e[m] = (...a) => {
        stage(this.stageNow[0], `${this.stageNow[1]} — ${what}`);
        return f(...a);
      };
    }
  }

  /**
   * Build the run's context on `backend` (jax-js starts once per tab: the first session decides).
   * @throws Error when the backend cannot start (no WebGPU adapter) or the settings are invalid.
   */
  static async open(settings: PlaySettings, backend: JaxBackend, ev: PlayEvents = {}): Promise<PlaySession> {
    return PlaySession.openConfig(playConfig(settings), backend, ev, { detail: `building the model and ${settings.trainSize} examples` });
  }

  /**
   * A pretrained model's session (`rlvr play --model`): `modelPlayConfig`, with the tokenizer and
   * the engine built from `files` (config.json, model.safetensors, tokenizer.json, … as fetched).
   * @param model names the model in errors and the engine's info (e.g. "smollm2-135m-instruct")
   * @throws Error naming the file when one is missing or invalid, or as `open`
   */
  static async openModel(files: ModelFiles, model: string, settings: ModelPlaySettings, backend: JaxBackend, ev: PlayEvents = {}): Promise<PlaySession> {
    return PlaySession.openConfig(modelPlayConfig(settings, model), backend, ev, { modelFiles: files, detail: `building ${model} (LoRA rank ${settings.loraRank}) and ${settings.trainSize} word problems` });
  }

  /** Start jax-js on `backend` and build `cfg`'s context (from `o.modelFiles` when given: buildContext). */
  private static async openConfig(cfg: RunConfig, backend: JaxBackend, ev: PlayEvents, o: { modelFiles?: ModelFiles; detail: string }): Promise<PlaySession> {
    useJaxBackend(backend);
    ev.stage?.("setup", o.detail);
    const ctx = await buildContext(cfg, o.modelFiles ? { modelFiles: o.modelFiles } : {});
    ev.stage?.("setup", `${ctx.engine.info().numParams.toLocaleString("en")} ${cfg.model.lora ? "trainable (LoRA) " : ""}parameters on ${jaxDevice()}`);
    return new PlaySession(cfg, ctx, ev);
  }

  /** The engine's device line, e.g. "cpu (jax-js wasm, 1 thread)" or "gpu (jax-js webgpu)". */
  device(): string {
    return this.ctx.engine.info().device;
  }

  /** Ask the running stage to stop after its current step. */
  stop(): void {
    this.stopped = true;
  }

  /** Held-out evaluation (the run's eval settings, as the Node trainer's evalHeldOut), reported as an eval record. */
  async evaluate(label: string, step: number): Promise<EvalResult> {
    const e = this.cfg.eval;
    this.ev.stage?.("eval", `held-out evaluation (${label})`);
    const res = await evaluate(this.ctx, this.ctx.test, {
      maxNewTokens: e.maxNewTokens ?? this.cfg.rl?.maxNewTokens ?? 16,
      temperature: e.temperature,
      n: e.temperature > 0 ? e.samples : 1,
      greedy: e.greedy,
      seed: this.cfg.seed,
    });
    this.evals[label] = res;
    this.ev.eval?.({ label, step, ...res });
    return res;
  }

  /**
   * The SFT warm-up: `sftStep` until sft.steps, or until the check set's greedy accuracy reaches
   * sft.stopAt (checked every stopAt.every steps, logged as check/accuracy, as the Node trainer's runSft).
   */
  async runSft(): Promise<void> {
    const s = this.cfg.sft;
    if (!s) return;
    this.ev.stage?.("sft", `SFT warm-up: up to ${s.steps} steps of ${s.batchSize} examples`);
    while (!this.stopped && this.sft.step < s.steps) {
      await sftStep(this.ctx, this.sft, this.log);
      await pause();
      const c = await sftStopCheck(this.ctx, this.sft, s.steps, this.log);
      if (c?.stop) {
        this.ev.stage?.("sft", `stopped at step ${this.sft.step}: check-set accuracy ${(c.accuracy * 100).toFixed(1)}%`);
        break;
      }
    }
  }

  /** GRPO: the pipeline's `rlStep` until rl.steps (or `stop()`). */
  async runRl(): Promise<void> {
    const r = this.cfg.rl;
    if (!r) return;
    const alg = this.cfg.algorithm!;
    this.rl ??= initRlState(this.ctx, alg);
    if (this.rl.step === 0 && (this.rl.kl.coef > 0 || alg.kl.adaptive)) await this.ctx.engine.setReference("policy");
    this.ev.stage?.("rl", `GRPO: ${r.steps} steps of ${r.promptsPerStep} prompts × ${r.groupSize}`);
    while (!this.stopped && this.rl.step < r.steps) {
      this.ev.stage?.("rl", `GRPO step ${this.rl.step + 1} of ${r.steps} (${r.promptsPerStep} prompts × ${r.groupSize})`);
      await rlStep(this.ctx, alg, this.rl, this.log);
      await this.ev.rlStepDone?.(this.rl.step);
      await pause();
    }
  }

  /** The whole run: evaluate ("init"), SFT warm-up, evaluate ("sft"), GRPO, evaluate ("rl"). */
  async run(): Promise<void> {
    await this.evaluate("init", 0);
    if (this.cfg.sft && !this.stopped) {
      await this.runSft();
      await this.evaluate("sft", 0);
    }
    if (this.stopped) return this.ev.stage?.("done", "stopped");
    await this.runRl();
    await this.evaluate("rl", this.rl?.step ?? 0);
    this.ev.stage?.("done", this.stopped ? "stopped" : "finished");
  }

  /** The trained model as a Hugging Face-layout checkpoint: file name → bytes (config.json, model.safetensors, tokenizer files). */
  async checkpoint(): Promise<Record<string, Uint8Array>> {
    return checkpointFiles(this.ctx.engine as EmbeddedEngine, this.ctx.tokenizer);
  }

  /** Release the engine. */
  async close(): Promise<void> {
    await this.ctx.close();
  }
}
