/**
 * The algorithm block of a run config: a zod schema with defaults, the named presets, and
 * `resolveAlgorithm` (preset name or partial config → validated config). Errors name the field:
 * `config error at algorithm.loss.clipHigh: Too small: expected number to be >=0 (got -1)`.
 */
import { z } from "zod";
import { AGGREGATION_MODES } from "./aggregation.ts";
import { KL_ESTIMATORS, type KlEstimator } from "./kl.ts";
import { getAdvantage, getPolicyLoss, hasAdvantage, hasPolicyLoss, listAdvantages, listPolicyLosses } from "./registry.ts";
import type { AggregationMode, LossConfig } from "./types.ts";
import "./advantages/index.ts";
import "./losses/index.ts";

type Issue = z.core.$ZodRawIssue;

/** Copy the issues of a nested parse into the outer transform context, under `prefix`. */
function forward(ctx: { issues: Issue[] }, error: z.ZodError, prefix: PropertyKey[], input: unknown): void {
  for (const iss of error.issues) {
    ctx.issues.push({ code: "custom", message: iss.message, path: [...prefix, ...iss.path], input: (iss as { input?: unknown }).input ?? input });
  }
}

/** `advantage`: `{name, ...estimator options}`; options are validated by the estimator's schema. */
export const advantageConfigSchema = z
  .looseObject({ name: z.string().min(1).default("grpo") })
  .transform((v, ctx) => {
    if (!hasAdvantage(v.name)) {
      ctx.issues.push({ code: "custom", path: ["name"], input: v.name, message: `unknown advantage estimator "${v.name}"; registered: ${listAdvantages().join(", ")} (or registerAdvantage your own)` });
      return z.NEVER;
    }
    const schema = getAdvantage(v.name).schema;
    if (!schema) return v;
    const r = schema.safeParse(v, { reportInput: true });
    if (!r.success) {
      forward(ctx, r.error, [], v);
      return z.NEVER;
    }
    return { ...(r.data as object), name: v.name } as { name: string; [option: string]: unknown };
  });

/**
 * `loss`: `{name, clipLow, clipHigh, dualClip?, ...loss options}`. The registered loss's defaults
 * fill the fields the user leaves out (e.g. GSPO's 3e-4/4e-4), then 0.2/0.2.
 */
export const lossConfigSchema = z
  .looseObject({
    name: z.string().min(1).default("ppo_clip"),
    clipLow: z.number().min(0).max(1).optional(),
    clipHigh: z.number().min(0).optional(),
    dualClip: z.number().gt(1).optional(),
  })
  .transform((v, ctx): LossConfig => {
    if (!hasPolicyLoss(v.name)) {
      ctx.issues.push({ code: "custom", path: ["name"], input: v.name, message: `unknown policy loss "${v.name}"; registered: ${listPolicyLosses().join(", ")} (or registerPolicyLoss your own)` });
      return z.NEVER;
    }
    const entry = getPolicyLoss(v.name);
    const given = Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined));
    const merged: Record<string, unknown> = { clipLow: 0.2, clipHigh: 0.2, ...entry.defaults, ...given };
    if (entry.schema) {
      const r = entry.schema.safeParse(merged, { reportInput: true });
      if (!r.success) {
        forward(ctx, r.error, [], merged);
        return z.NEVER;
      }
      Object.assign(merged, r.data as object);
    }
    return merged as LossConfig;
  });

const klAdaptiveSchema = z.strictObject({
  target: z.number().gt(0),
  horizon: z.number().gt(0).default(10000),
});

/** `kl`: coefficient, estimator, placement (loss | reward), optional adaptive controller. */
export const klConfigSchema = z.strictObject({
  coef: z.number().min(0).default(0),
  estimator: z.enum(KL_ESTIMATORS as [KlEstimator, ...KlEstimator[]]).default("k3"),
  placement: z.enum(["loss", "reward"]).default("loss"),
  adaptive: klAdaptiveSchema.optional(),
});

/** `entropy`: bonus coefficient, optional adaptive controller (Skywork-OR1; TRL defaults). */
export const entropyConfigSchema = z.strictObject({
  coef: z.number().min(0).default(0),
  adaptive: z
    .strictObject({
      target: z.number().gt(0).default(0.2),
      step: z.number().gt(0).default(0.005),
      min: z.number().min(0).default(0),
      max: z.number().gt(0).default(1),
    })
    .optional(),
});

/** `mismatch`: TIS/MIS correction between sampler and trainer log-probs (off when absent). */
export const mismatchConfigSchema = z
  .strictObject({
    level: z.enum(["token", "sequence", "geometric"]).default("token"),
    mode: z.enum(["truncate", "mask"]).default("truncate"),
    cap: z.number().gt(0).default(3.0),
    low: z.number().min(0).default(0.5),
    high: z.number().gt(0).default(5.0),
  })
  .refine((m) => m.low <= m.high, { message: "need low ≤ high", path: ["high"] });

/**
 * `overlong`: DAPO soft overlong punishment, read by the reward stage (`dapoOverlongPenalty`).
 * maxLength defaults to the rollout's max new tokens; buffer to bufferFraction × maxLength.
 */
export const overlongConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  maxLength: z.number().int().gt(0).optional(),
  buffer: z.number().int().gt(0).optional(),
  bufferFraction: z.number().gt(0).max(1).default(0.2),
  factor: z.number().min(0).default(1.0),
});

/** The whole algorithm block. Unknown keys are errors (typos name themselves). */
export const algorithmConfigSchema = z.strictObject({
  /** Preset the block started from (informational once resolved). */
  preset: z.string().optional(),
  advantage: advantageConfigSchema.prefault({}),
  loss: lossConfigSchema.prefault({}),
  aggregation: z.enum(AGGREGATION_MODES as [AggregationMode, ...AggregationMode[]]).default("token-mean"),
  kl: klConfigSchema.prefault({}),
  entropy: entropyConfigSchema.prefault({}),
  mismatch: mismatchConfigSchema.optional(),
  overlong: overlongConfigSchema.optional(),
});

/** A resolved algorithm config. */
export type AlgorithmConfig = z.output<typeof algorithmConfigSchema>;
/** What a user may write (any field optional). */
export type AlgorithmConfigInput = z.input<typeof algorithmConfigSchema>;

/** A named, documented bundle of settings. */
export interface Preset {
  description: string;
  config: AlgorithmConfigInput;
  /**
   * Rollout-stage settings the method also comes with, filled into the run config's `rl` block
   * when it does not set them (DAPO: `rl.dynamicSampling` with its defaults; src/config/schema.ts).
   */
  rl?: { dynamicSampling?: Record<string, never> };
}

/** The presets a config can name (see docs/algorithms.md "Presets"). */
export const PRESETS: Readonly<Record<string, Preset>> = {
  grpo: {
    description:
      "GRPO as in DeepSeekMath/DeepSeek-R1 (arXiv:2402.03300, arXiv:2501.12948): group-normalised advantages (unbiased std, eps 1e-6), PPO clip 0.2, per-sequence token mean, k3 KL to the reference in the loss with β = 0.001.",
    config: {
      advantage: { name: "grpo" },
      loss: { name: "ppo_clip", clipLow: 0.2, clipHigh: 0.2 },
      aggregation: "seq-mean-token-mean",
      kl: { coef: 0.001, estimator: "k3", placement: "loss" },
    },
  },
  dr_grpo: {
    description:
      "Dr. GRPO (arXiv:2503.20783): advantages without std division, token sums normalised by a constant (max response length), no KL.",
    config: {
      advantage: { name: "dr_grpo" },
      loss: { name: "ppo_clip", clipLow: 0.2, clipHigh: 0.2 },
      aggregation: "seq-mean-token-sum-norm",
      kl: { coef: 0 },
    },
  },
  dapo: {
    description:
      "DAPO (arXiv:2503.14476): clip-higher 0.2/0.28, token-level mean over the batch, no KL, dynamic sampling, soft overlong punishment (buffer = 20% of the max length, factor 1).",
    config: {
      advantage: { name: "grpo" },
      loss: { name: "ppo_clip", clipLow: 0.2, clipHigh: 0.28 },
      aggregation: "token-mean",
      kl: { coef: 0 },
      overlong: { enabled: true, bufferFraction: 0.2, factor: 1.0 },
    },
    rl: { dynamicSampling: {} },
  },
  gspo: {
    description:
      "GSPO (arXiv:2507.18071): sequence-level ratio with clip 3e-4/4e-4, per-sequence token mean, GRPO advantages, no KL.",
    config: {
      advantage: { name: "grpo" },
      loss: { name: "gspo", clipLow: 3e-4, clipHigh: 4e-4 },
      aggregation: "seq-mean-token-mean",
      kl: { coef: 0 },
    },
  },
  cispo: {
    description:
      "CISPO (MiniMax-M1, arXiv:2506.13585): clipped IS weight (no lower bound, upper 1+5.0) times the REINFORCE term, token-level mean, GRPO advantages, no KL.",
    config: {
      advantage: { name: "grpo" },
      loss: { name: "cispo", clipLow: 1.0, clipHigh: 5.0 },
      aggregation: "token-mean",
      kl: { coef: 0 },
    },
  },
  sapo: {
    description: "SAPO (arXiv:2511.20347): soft sigmoid gate, τ = 1.0 (A > 0) / 1.05 (A < 0), token-level mean, GRPO advantages, no KL.",
    config: {
      advantage: { name: "grpo" },
      loss: { name: "sapo", tauPos: 1.0, tauNeg: 1.05 },
      aggregation: "token-mean",
      kl: { coef: 0 },
    },
  },
  rloo: {
    description:
      "RLOO (arXiv:2402.14740): leave-one-out baseline, k1 KL subtracted from the reward with β = 0.05 (TRL's default), PPO clip 0.2, per-sequence token mean.",
    config: {
      advantage: { name: "rloo" },
      loss: { name: "ppo_clip", clipLow: 0.2, clipHigh: 0.2 },
      aggregation: "seq-mean-token-mean",
      kl: { coef: 0.05, estimator: "k1", placement: "reward" },
    },
  },
  reinforce_pp: {
    description:
      "REINFORCE++ (arXiv:2501.03262): per-token k1 KL penalty in the reward (β = 0.01), discounted returns (γ = 1) whitened over the batch's tokens, PPO clip 0.2, token-level mean.",
    config: {
      advantage: { name: "reinforce_pp", gamma: 1 },
      loss: { name: "ppo_clip", clipLow: 0.2, clipHigh: 0.2 },
      aggregation: "token-mean",
      kl: { coef: 0.01, estimator: "k1", placement: "reward" },
    },
  },
};

/** Names of the presets. */
export function listPresets(): string[] {
  return Object.keys(PRESETS);
}

/** A config error whose message names every offending field. */
export class AlgorithmConfigError extends Error {
  constructor(readonly issues: { path: string; message: string }[]) {
    super(issues.map((i) => `config error at ${i.path}: ${i.message}`).join("\n"));
    this.name = "AlgorithmConfigError";
  }
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Deep merge: objects merge key by key, anything else is replaced; `undefined` keeps the base. */
function merge(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  if (!isPlainObject(base) || !isPlainObject(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
}

function show(x: unknown): string {
  try {
    const s = JSON.stringify(x);
    return s === undefined ? String(x) : s.length > 60 ? s.slice(0, 57) + "..." : s;
  } catch {
    return String(x);
  }
}

/**
 * Resolve an algorithm config.
 * @param input  a preset name ("grpo", "dapo", ...), or a partial config, optionally with
 *               `preset: "<name>"` whose settings it overrides (deep merge). A `loss` or
 *               `advantage` block that names a different loss/estimator than the preset replaces
 *               the preset's block instead of merging into it.
 * @param opts   `path`: prefix for error paths (default "algorithm").
 * @returns the validated config with every default filled in.
 * @throws AlgorithmConfigError naming each bad field, the problem, and the value given.
 */
export function resolveAlgorithm(input: string | AlgorithmConfigInput | undefined, opts: { path?: string } = {}): AlgorithmConfig {
  const prefix = opts.path ?? "algorithm";
  let raw: unknown = input ?? {};
  if (typeof raw === "string") raw = { preset: raw };
  // `dynamicSampling: false` is the old default that run directories written before the move keep in
  // their config.yaml: off either way, so it loads (and is dropped); anything else says where it went.
  if (isPlainObject(raw) && raw["dynamicSampling"] === false) {
    const { dynamicSampling: _off, ...rest } = raw;
    raw = rest;
  }
  if (isPlainObject(raw) && raw["dynamicSampling"] !== undefined) {
    throw new AlgorithmConfigError([{ path: `${prefix}.dynamicSampling`, message: "dynamic sampling moved to rl.dynamicSampling, beside the other data-selection blocks; remove it here and set rl.dynamicSampling: {} (DAPO's defaults) or {metric, maxGenBatches}, or enabled: false to turn it off" }]);
  }
  if (isPlainObject(raw) && raw["preset"] !== undefined) {
    const name = raw["preset"];
    const preset = typeof name === "string" ? PRESETS[name] : undefined;
    if (!preset) {
      throw new AlgorithmConfigError([{ path: `${prefix}.preset`, message: `unknown preset ${show(name)}; expected one of ${listPresets().join(", ")}` }]);
    }
    const base: Record<string, unknown> = { ...(preset.config as Record<string, unknown>) };
    for (const block of ["loss", "advantage"] as const) {
      const o = raw[block];
      const b = base[block];
      if (isPlainObject(o) && isPlainObject(b) && o["name"] !== undefined && o["name"] !== b["name"]) delete base[block];
    }
    raw = merge(base, raw);
  }
  const r = algorithmConfigSchema.safeParse(raw, { reportInput: true });
  if (r.success) return r.data;
  throw new AlgorithmConfigError(
    r.error.issues.flatMap((iss) => {
      if (iss.code === "unrecognized_keys") {
        return iss.keys.map((k) => ({ path: [prefix, ...iss.path.map(String), k].join("."), message: "unknown field (check its spelling against docs/algorithms.md)" }));
      }
      const path = [prefix, ...iss.path.map(String)].join(".");
      const got = (iss as { input?: unknown }).input;
      return { path, message: got === undefined ? iss.message : `${iss.message} (got ${show(got)})` };
    }),
  );
}
