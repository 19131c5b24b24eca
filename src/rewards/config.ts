/**
 * The `reward:` block of a run config (docs/rewards.md): which verifiers score a response, with
 * what weights, gates and length shaping. Compiled into a reward function by ./compile.ts.
 *
 *   reward: {verifier: exact}                                  # one verifier by name
 *   reward: {verifier: math, options: {...}}                   # … with options
 *   reward: {module: ./my-reward.ts, export: score}            # a user function (path relative to the config file)
 *   reward:
 *     components:                                              # a weighted sum
 *       - {verifier: format, weight: 0.2, options: {template: think-answer}}
 *       - {name: accuracy, verifier: math, gate: format}       # counts only where format passed
 *     shaping: [{type: overlong, bufferFraction: 0.2}]         # DAPO soft overlong punishment
 *
 * This module only validates shapes (zod) and resolves which verifier a run uses; it imports no
 * verifier, so the config schema stays light.
 */
import { z } from "zod";

const posInt = z.number().int().positive();
const moduleFields = {
  /** A user reward module: a path (relative to the config file's folder) or a package name. */
  module: z.string().min(1).optional(),
  /** The module's export (default "default"). */
  export: z.string().min(1).optional(),
};
const failureFields = {
  /** Time limit per call, ms (default: 10 000 for user modules; with rl.verifierPool on,
   *  rl.verifierPool.timeoutMs for every verifier). In-process, only an async function can be
   *  stopped; with the pool on, any. */
  timeoutMs: posInt.optional(),
  /** Reward when the verifier throws, times out or returns a wrong shape (default 0; null = skip the sample). */
  fallback: z.number().finite().nullable().optional(),
};

const gateSchema = z.union([z.string().min(1), z.strictObject({ component: z.string().min(1), min: z.number().finite().optional() })]);

export const rewardComponentSchema = z
  .strictObject({
    /** Component name (metrics `reward/<name>`; default: the verifier's name or the export's). */
    name: z.string().min(1).optional(),
    /** A registered verifier (built-in, a task's, or one a plugin registered). */
    verifier: z.string().min(1).optional(),
    ...moduleFields,
    weight: z.number().finite().default(1),
    options: z.unknown().optional(),
    /** Count this component only where another passes: a component name (value > 0) or {component, min}. */
    gate: gateSchema.optional(),
    ...failureFields,
  })
  .refine((c) => (c.verifier === undefined) !== (c.module === undefined), { message: "set exactly one of verifier (a registered name) or module (a file with your reward function)" })
  .refine((c) => c.export === undefined || c.module !== undefined, { message: "export: names a function of a module; set module: too" });

const lengthCap = { maxLength: posInt.optional() };
export const rewardShapingSchema = z.discriminatedUnion("type", [
  /** DAPO soft overlong punishment, added to the reward (src/rewards/shaping/overlong.ts). */
  z.strictObject({
    type: z.literal("overlong"),
    name: z.string().min(1).default("overlong"),
    ...lengthCap,
    buffer: posInt.optional(),
    bufferFraction: z.number().gt(0).max(1).default(0.2),
    factor: z.number().min(0).default(1),
  }),
  /** Cosine length-scaled reward (Yeo et al. 2025); replaces the correctness component's value. */
  z.strictObject({
    type: z.literal("cosine"),
    name: z.string().min(1).default("cosine"),
    correctness: z.string().min(1).optional(),
    ...lengthCap,
    correctStart: z.number().finite().optional(),
    correctEnd: z.number().finite().optional(),
    wrongStart: z.number().finite().optional(),
    wrongEnd: z.number().finite().optional(),
    exceed: z.number().finite().optional(),
  }),
  /** GRPO-λ (Dai et al. 2025): length-penalised reward for the top-λ groups; replaces the correctness component's value. */
  z.strictObject({
    type: z.literal("grpo_lambda"),
    name: z.string().min(1).default("grpo_lambda"),
    correctness: z.string().min(1).optional(),
    lambda: z.number().min(0).max(1),
    selection: z.enum(["top-fraction", "ratio"]).default("top-fraction"),
    requireCorrect: z.boolean().default(true),
    weight: z.number().finite().default(1),
  }),
]);

export const rewardConfigSchema = z
  .strictObject({
    /** One registered verifier by name (exact, f1, choice, math, format, ifeval, code, majority, task, a task's name…). */
    verifier: z.string().min(1).optional(),
    ...moduleFields,
    options: z.unknown().optional(),
    ...failureFields,
    /** A weighted sum of components. */
    components: z.array(rewardComponentSchema).min(1).optional(),
    /** Length shaping applied after the components. */
    shaping: z.array(rewardShapingSchema).default([]),
    /** The component whose verdict gives `correct` (accuracy, eval); default the first that is not a format check. */
    correct: z.string().min(1).optional(),
    /**
     * A verdict that does not say `correct` itself (a reward function returning a number, or
     * `{reward}` without `correct`) counts as correct when its reward is at least this (default 1:
     * full credit only; partial credit is reward, not accuracy).
     */
    correctAt: z.number().finite().default(1),
    /**
     * The run stops (one line naming the component and its first error) when one component fails
     * — throws, returns a wrong shape, times out, crashes its worker — on more than this fraction
     * of a step's samples (default 0.5; 1 = never stop). The first failure is always warned about.
     */
    maxErrorRate: z.number().min(0).max(1).default(0.5),
  })
  .refine((r) => [r.verifier, r.module, r.components].filter((x) => x !== undefined).length === 1, {
    message: "set exactly one of verifier (a registered name), module (a file with your reward function) or components (a list)",
  })
  .refine((r) => r.export === undefined || r.module !== undefined, { message: "export: names a function of a module; set module: too" });

export type RewardConfig = z.output<typeof rewardConfigSchema>;
export type RewardConfigInput = z.input<typeof rewardConfigSchema>;
export type RewardComponentConfig = z.output<typeof rewardComponentSchema>;
export type RewardShapingConfig = z.output<typeof rewardShapingSchema>;

/** Built-in verifier names, for messages written before the registry is loaded (see ./verifiers.ts). */
export const BUILTIN_VERIFIER_NAMES = ["exact", "f1", "choice", "math", "format", "ifeval", "ifeval-reference", "code", "majority", "task"];

/** The config fields the reward resolution reads. */
export interface RewardSource {
  reward?: RewardConfig;
  data: { task?: string; train?: string; verifier?: string; preset?: string };
}

/**
 * The reward block a run uses: `reward:` when set; else `data.verifier`; else the procedural task
 * `data.task`; else, for a dataset preset that implies it (gsm8k, math, deepscaler, orz), math.
 * @returns the block and the config path that chose it (for error messages)
 * @throws Error `config error at data.verifier: …` for a custom dataset (data.train) that names
 *   no verifier, listing the choices; `config error at reward: …` when both reward and
 *   data.verifier are set
 */
export function resolveRewardConfig(cfg: RewardSource): { reward: RewardConfig; at: string } {
  const d = cfg.data;
  if (cfg.reward) {
    if (d.verifier !== undefined) throw new Error(`config error at reward: both reward and data.verifier ("${d.verifier}") are set; keep one (reward: {verifier: ${d.verifier}} is the same as data.verifier)`);
    return { reward: cfg.reward, at: "reward" };
  }
  const one = (verifier: string, at: string) => ({ reward: rewardConfigSchema.parse({ verifier }), at });
  if (d.verifier !== undefined) return one(d.verifier, "data.verifier");
  if (d.task !== undefined) {
    // A procedural task named like a built-in verifier (the ifeval task) keeps its own verifier:
    // the `task` verifier calls the example's task, under a component named after the task.
    if (BUILTIN_VERIFIER_NAMES.includes(d.task)) return { reward: rewardConfigSchema.parse({ components: [{ name: d.task, verifier: "task" }] }), at: "data.task" };
    return one(d.task, "data.task");
  }
  if (d.preset !== undefined && d.preset !== "generic") return one("math", "data.preset");
  throw new Error(
    `config error at data.verifier: a custom dataset (data.train ${d.train ?? ""}) must name its verifier; set reward: {verifier: <name>} ` +
      `(built-in: ${BUILTIN_VERIFIER_NAMES.join(", ")}, or a procedural task's name) or reward: {module: ./my-reward.ts, export: score} (see docs/rewards.md)`,
  );
}

/** Whether the reward block shapes with the DAPO overlong punishment. */
export function hasOverlongShaping(r: RewardConfig | undefined): boolean {
  return !!r?.shaping.some((s) => s.type === "overlong");
}

/**
 * Config-time checks of a run's reward: it resolves (a custom dataset names its verifier), and the
 * DAPO overlong punishment is not applied twice (once by the algorithm preset's `overlong` block,
 * which the RL step applies, and again by `reward.shaping`).
 * @throws Error `config error at <field>: …`
 */
export function checkRewardConfig(cfg: RewardSource & { algorithm?: { overlong?: { enabled?: boolean } } }): void {
  resolveRewardConfig(cfg);
  if (hasOverlongShaping(cfg.reward) && cfg.algorithm?.overlong?.enabled) {
    throw new Error("config error at reward.shaping: the algorithm already applies the DAPO overlong punishment (rl.algorithm's overlong block, on in the dapo preset); remove the overlong entry here or set rl.algorithm.overlong.enabled: false");
  }
}
