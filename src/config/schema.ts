/**
 * The run config: one YAML file validated by this schema at load time. Every error names the
 * field and what was expected (zod paths), e.g.
 *   config error in run.yaml at rl.groupSize: Too small: expected number to be >0, got 0
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse as parseYaml, YAMLParseError } from "yaml";
import { z } from "zod";
import { checkRunMemory } from "./memory.ts";
import { findInertField } from "./inert.ts";
import { resolveConfigPaths } from "./paths.ts";
import { getAdvantage, getPolicyLoss, listAdvantages, mismatchConfigSchema, PRESETS, resolveAlgorithm, type AlgorithmConfig } from "../algorithms/index.ts";
import { METHOD_ALIASES, methodsConfigSchema, type MethodAliasesInput } from "../methods/config.ts";
import { dynamicSamplingSchema, rolloutSelectionFields } from "../rollout/config.ts";
import { applyRolloutDefaults, rolloutEngineSchema } from "../rollout/samplers/config.ts";
import { rolloutStrategyFields } from "../rollout/strategy-config.ts";
import { checkRewardConfig, rewardConfigSchema } from "../rewards/config.ts";
import { closest } from "../util/suggest.ts";
import { modelSchema } from "../engines/config.ts";
import { envConfigSchema, envTaskName } from "../envs/config.ts";
import { getEnv } from "../envs/registry.ts";

const posInt = z.number().int().positive();

const tokenizerSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("char"), alphabet: z.string().min(1) }),
  z.strictObject({ type: z.literal("hf"), path: z.string() }),
]);

const dataSchema = z
  .strictObject({
    /** Procedural task name (addition, countdown, ...). */
    task: z.string().optional(),
    difficulty: z.number().int().optional(),
    /** JSONL/Parquet files (else generated from the task). */
    train: z.string().optional(),
    test: z.string().optional(),
    preset: z.enum(["generic", "gsm8k", "math", "deepscaler", "orz"]).optional(),
    /** Number of train examples to generate (procedural tasks). */
    trainSize: posInt.max(10_000_000).default(20000),
    /** Held-out examples for evaluation. */
    testSize: posInt.max(1_000_000).default(256),
    /** Prompt template: plain (default), r1, boxed. */
    template: z.enum(["plain", "r1", "boxed"]).default("plain"),
    /** Render each row's `messages` (or its prompt as one user message) through the model's own chat template, with the generation prompt (docs/training.md, "Chat models"). */
    chat: z.boolean().default(false),
    /** Default system message for rows without one (a row's `system` field wins). */
    system: z.string().optional(),
    /** Verifier of the rows, by registry name (same as `reward: {verifier: <name>}`); a custom dataset must name one. */
    verifier: z.string().optional(),
    /** Field names of dataset rows, overriding the preset's (e.g. {prompt: question, answer: final}). */
    fields: z.strictObject({ prompt: z.string().optional(), answer: z.string().optional(), solution: z.string().optional(), id: z.string().optional() }).optional(),
    /** Malformed dataset rows: stop with an error naming file and line (default), or skip and count them. */
    onBadRow: z.enum(["error", "skip"]).default("error"),
  })
  .refine((d) => d.task !== undefined || d.train !== undefined, { message: "set data.task (a procedural task) or data.train (a JSONL/Parquet file)" })
  .refine((d) => !(d.system !== undefined && d.template === "r1"), { message: "data.system and data.template: r1 both set the system message; drop one", path: ["system"] });

const optimSchema = {
  lr: z.number().positive(),
  schedule: z.enum(["constant", "cosine"]).default("constant"),
  warmupSteps: z.number().int().min(0).default(0),
  minLrRatio: z.number().min(0).max(1).default(0.1),
  weightDecay: z.number().min(0).default(0),
  maxGradNorm: z.number().min(0).default(1),
};

const sftSchema = z.strictObject({
  steps: z.number().int().min(0),
  batchSize: posInt.max(1 << 20).default(64),
  microBatchSize: posInt.max(1 << 20).optional(),
  /** Demonstrations: SFT cycles over the first `examples` training examples (default: all of them). */
  examples: posInt.optional(),
  /**
   * Stop the warm-up early once greedy accuracy on a check set reaches `accuracy` (checked every
   * `every` steps; `steps` stays the cap and the schedule's length). The check set is the last
   * `prompts` training examples, held out from SFT's demonstrations (never the test split). Use it
   * to start RL from a model that is right on some fraction of prompts, whatever the seed.
   */
  stopAt: z
    .strictObject({ accuracy: z.number().gt(0).max(1), every: posInt.default(5), prompts: posInt.default(256) })
    .optional(),
  ...optimSchema,
  lr: z.number().positive().default(3e-3),
  schedule: z.enum(["constant", "cosine"]).default("cosine"),
});

const rlSchema = z.strictObject({
  steps: z.number().int().min(0),
  /** Prompts per step (each gets a group of groupSize responses). */
  promptsPerStep: posInt.max(1 << 16).default(16),
  /**
   * Responses per prompt. 1 only with an advantage estimator that needs no group
   * (an estimator registered with `needsGroups: false`, e.g. REINFORCE++); checked in parseRunConfig.
   */
  groupSize: posInt.max(4096).default(8),
  maxNewTokens: posInt.max(1 << 20).default(16),
  temperature: z.number().min(0).default(1),
  topP: z.number().gt(0).max(1).default(1),
  topK: z.number().int().min(0).default(0),
  /** PPO epochs over each batch of rollouts. */
  epochs: posInt.max(1024).default(1),
  /** Optimizer steps per epoch (the batch is split into this many mini-batches). */
  miniBatches: posInt.max(1 << 20).default(1),
  /** Sequences per engine call (gradient accumulation); default = the whole mini-batch. */
  microBatchSize: posInt.max(1 << 20).optional(),
  ...optimSchema,
  lr: z.number().positive().default(1e-4),
  /** The algorithm: a preset name (grpo, dr_grpo, dapo, gspo, ...) or a full block. */
  algorithm: z.union([z.string(), z.record(z.string(), z.unknown())]).default("grpo"),
  /**
   * Score responses in the worker-thread verifier pool (src/rewards/pool) with a hard per-call
   * timeout: a hung or crashing verifier costs `fallback` reward and a counted event, never the
   * run. Off by default (in-process scoring; user-registered tasks must be importable by workers
   * to use the pool — list their modules in `modules`).
   */
  verifierPool: z
    .strictObject({
      enabled: z.boolean().default(false),
      size: posInt.max(1024).optional(),
      timeoutMs: posInt.default(10000),
      fallback: z.number().default(0),
      modules: z.array(z.string()).default([]),
    })
    .prefault({}),
  /** Reset the reference model to the current policy every N steps (0 = never; ProRL). */
  referenceResetEvery: z.number().int().min(0).default(0),
  /**
   * Asynchronous rollouts with bounded staleness (src/pipeline/step.ts): the next `maxStaleness`
   * steps' batches are generated while the trainer trains, by a sampler apart from it (the
   * rollout engine, or for the embedded engine a copy of the policy in a worker thread); no batch
   * is trained more than `maxStaleness` policy versions after the weights that sampled it.
   * Mismatch correction (algorithm.mismatch, truncated importance sampling) defaults on. 0 = the
   * synchronous loop, exactly.
   */
  async: z.strictObject({ maxStaleness: z.number().int().min(0).max(8).default(1) }).optional(),
  /**
   * Data selection and overlong filtering (src/rollout/config.ts, docs/rollouts.md):
   * dynamicSampling (DAPO), difficultyFilter (pass-rate band), curriculum (difficulty from rolling
   * accuracy), domainSampling (RuleReasoner), maskTruncated.
   */
  ...rolloutSelectionFields,
  /**
   * Sampling strategies (src/rollout/strategy-config.ts, docs/rollouts.md): tree (entropy-guided
   * tree rollouts), hints (GHPO guided hints), agent (multi-turn tool use).
   */
  ...rolloutStrategyFields,
});

const evalSchema = z.strictObject({
  /** Evaluate every N RL steps (0 = only before and after). */
  every: z.number().int().min(0).default(0),
  /** Held-out examples per evaluation (<= data.testSize). */
  n: posInt.max(1_000_000).optional(),
  /** Sampling temperature (0 = greedy decoding). */
  temperature: z.number().min(0).default(0),
  /** Samples per prompt (pass@k, maj@k and mean@n use them; with temperature 0 keep 1). */
  samples: posInt.max(4096).default(1),
  /** With temperature > 0, also decode greedily and report greedy accuracy alongside. */
  greedy: z.boolean().default(false),
  maxNewTokens: posInt.max(1 << 20).optional(),
});

export const runConfigSchema = z.strictObject({
  seed: z.number().int().default(1),
  /** Run directory (metrics.jsonl, samples.jsonl, checkpoints/). */
  out: z.string().default("runs/run"),
  model: modelSchema,
  tokenizer: tokenizerSchema.optional(),
  data: dataSchema,
  /** A registered env played instead of a task's one-reply prompts (src/envs/, docs/envs.md); exclusive with data.task / data.train. */
  env: envConfigSchema.optional(),
  /** Who samples the rollouts: the trainer (default) or vLLM, colocated or on servers (src/rollout/samplers/config.ts, docs/scaling.md). */
  rollout: rolloutEngineSchema.optional(),
  /** How responses are scored (src/rewards/config.ts, docs/rewards.md); default data.verifier / data.task. */
  reward: rewardConfigSchema.optional(),
  sft: sftSchema.optional(),
  rl: rlSchema.optional(),
  /**
   * The methods a run enables, each by name with its options block (src/methods/, docs/methods.md):
   * built-ins `raft`, `relift`, `expert` (LUFFY/CHORD), `kd` (KDRL), `ttrl`, `ear`, `evol`,
   * `selfPlay`, and methods registered with defineMethod, e.g. `methods: {raft: {threshold: 1}}`.
   * The old `guided:` / `labelfree:` blocks are read as aliases of it (withMethodAliases).
   */
  methods: methodsConfigSchema.optional(),
  /**
   * Modules imported before the config is validated (src/config/plugins.ts): paths relative to the
   * config file, or package names. They register tasks, verifiers, losses, estimators and methods
   * with the public API, so the config can name them. .js/.mjs always; .ts needs tsx installed.
   */
  plugins: z.array(z.string().min(1)).default([]),
  eval: evalSchema.prefault({}),
  logging: z.strictObject({ samplesPerStep: z.number().int().min(0).default(4) }).prefault({}),
  /**
   * Resumable checkpoints (checkpoints/step-N/): written every `every` optimizer steps of each
   * stage (0 = never; SIGINT still writes one), keeping the newest `keepLast`.
   */
  checkpoint: z.strictObject({ every: z.number().int().min(0).default(0), keepLast: posInt.default(2) }).prefault({}),
  /** Stop the run after this many steps in a row were skipped for a non-finite loss or gradient. */
  faults: z.strictObject({ maxConsecutiveSkips: posInt.default(5) }).prefault({}),
});

/** A run config as written: the schema's input, plus the old `guided:` / `labelfree:` spellings of `methods:`. */
export type RunConfigInput = z.input<typeof runConfigSchema> & MethodAliasesInput;
export type RunConfig = z.output<typeof runConfigSchema> & { algorithm?: AlgorithmConfig };

/** A config error that names the file and field. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  const s = JSON.stringify(v);
  return s && s.length > 60 ? s.slice(0, 57) + "..." : String(s);
}

/** Unwrap optional/default/prefault/pipe/refine wrappers to the schema that holds the shape. */
function unwrapSchema(schema: unknown): unknown {
  let s = schema as { def?: Record<string, unknown> } | undefined;
  for (let i = 0; i < 10 && s?.def; i++) {
    const d = s.def;
    const inner = (d["innerType"] ?? d["in"] ?? d["schema"]) as typeof s | undefined;
    if (!inner || d["shape"]) break;
    s = inner;
  }
  return s;
}

/** The field names a config object accepts at `path` (for "did you mean" hints). */
function knownKeys(path: readonly PropertyKey[]): string[] {
  let s = unwrapSchema(runConfigSchema) as { shape?: Record<string, unknown> } | undefined;
  for (const k of path) s = unwrapSchema(s?.shape?.[k as string]) as typeof s;
  return s?.shape ? Object.keys(s.shape) : [];
}

/** The schema default of the field at dotted `path` (undefined: none), so a value equal to it counts as unset (src/config/inert.ts). */
function defaultAt(path: string): unknown {
  let s = unwrapSchema(runConfigSchema) as { shape?: Record<string, unknown>; def?: Record<string, unknown> } | undefined;
  const keys = path.split(".");
  keys.forEach((k, i) => {
    const next = s?.shape?.[k] as typeof s;
    s = i === keys.length - 1 ? next : (unwrapSchema(next) as typeof s);
  });
  for (let i = 0; i < 10 && s?.def; i++) {
    if (s.def["type"] === "default" || s.def["type"] === "prefault") return s.def["defaultValue"];
    s = (s.def["innerType"] ?? undefined) as typeof s;
  }
  return undefined;
}

const suggest = closest;

const TOKENIZER_HINT = 'expected {type: char, alphabet: "..."} or {type: hf, path: <dir with tokenizer.json>}';

/**
 * Validate a parsed config object. `where` names the source (file) in errors.
 * @throws ConfigError listing every problem as `config error in <where> at <path>: <message>, got <value>`.
 */
export function parseRunConfig(raw: unknown, where = "config"): RunConfig {
  const aliased = withMethodAliases(withEnvSlots(raw, where), where);
  if (!aliased.from.size) return parseResolved(aliased.raw, where);
  try {
    return parseResolved(aliased.raw, where);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    // Name a method's fields as the config spelled them (guided.relift.teacher, not methods.relift.teacher).
    throw new ConfigError(e.message.replace(/\bmethods\.([A-Za-z]+)\b/g, (m, k: string) => (aliased.from.has(k) ? `${aliased.from.get(k)}.${k}` : m)));
  }
}

/** parseRunConfig after the env slots and method aliases are applied. */
function parseResolved(raw: unknown, where: string): RunConfig {
  const r = runConfigSchema.safeParse(raw);
  if (!r.success) {
    const lines = r.error.issues.map((i) => {
      const path = i.path.length ? i.path.join(".") : "(top level)";
      const at = `config error in ${where} at ${path}`;
      if (i.code === "unrecognized_keys") {
        const known = knownKeys(i.path);
        const hints = i.keys.map((k) => suggest(k, known)).filter((x): x is string => x !== null);
        return `${at}: unknown field(s) ${i.keys.join(", ")}; ${hints.length ? `did you mean ${hints.join(", ")}?` : "remove or rename them"}`;
      }
      const value = i.path.reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Record<string, unknown>)[k as string] : undefined), raw);
      if (value === undefined && i.code === "invalid_type") {
        const fill: Record<string, string> = {
          model: "set model.path (a checkpoint directory) or model.init (a random model's size)",
          data: "set data.task (a procedural task) or data.train (a JSONL/Parquet file)",
          "tokenizer.alphabet": 'set tokenizer.alphabet to the characters the tokenizer knows, e.g. "0123456789+="',
          "tokenizer.path": "set tokenizer.path to a directory with tokenizer.json",
        };
        return `${at}: missing; ${fill[path] ?? `set ${path}`}`;
      }
      if (path === "tokenizer" || path === "tokenizer.type") return `${at}: ${TOKENIZER_HINT}, got ${describe(value)}`;
      return `${at}: ${i.message}, got ${describe(value)}`;
    });
    throw new ConfigError(lines.join("\n"));
  }
  const cfg: RunConfig = r.data;
  // Sizes that cannot fit are refused before anything is allocated (src/config/memory.ts).
  const mem = checkRunMemory(cfg);
  if (mem) throw new ConfigError(`config error in ${where} at ${mem.field}: ${mem.message}`);
  if (cfg.rl) {
    try {
      cfg.algorithm = resolveAlgorithm(cfg.rl.algorithm as never, { path: "rl.algorithm" });
      applyPresetRl(cfg);
    } catch (e) {
      const msg = (e as Error).message;
      throw new ConfigError(msg.startsWith("config error at ") ? `config error in ${where} at ${msg.slice("config error at ".length)}` : `config error in ${where}: ${msg}`);
    }
  }
  const rolloutError = applyRolloutDefaults(cfg);
  if (rolloutError) throw new ConfigError(`config error in ${where} at rollout: ${rolloutError}`);
  if (cfg.rl) checkCapabilities(cfg, where);
  // A field that does nothing under the chosen engine, sampler, mode or device (src/config/inert.ts).
  const inert = findInertField(raw, cfg, defaultAt);
  if (inert) throw new ConfigError(`config error in ${where} at ${inert.field}: ${inert.why}`);
  // rl.async trains on batches sampled by older weights: correct for the gap by default.
  if ((cfg.rl?.async?.maxStaleness ?? 0) > 0 && cfg.algorithm && !cfg.algorithm.mismatch) cfg.algorithm.mismatch = mismatchConfigSchema.parse({});
  try {
    checkRewardConfig(cfg);
  } catch (e) {
    const msg = (e as Error).message;
    throw new ConfigError(msg.startsWith("config error at ") ? `config error in ${where} at ${msg.slice("config error at ".length)}` : `config error in ${where}: ${msg}`);
  }
  return cfg;
}

/** The rollout settings a preset comes with (dapo: rl.dynamicSampling), where the rl block does not set them. */
function applyPresetRl(cfg: RunConfig): void {
  const implied = cfg.algorithm?.preset ? PRESETS[cfg.algorithm.preset]?.rl : undefined;
  if (implied?.dynamicSampling && cfg.rl && cfg.rl.dynamicSampling === undefined) cfg.rl.dynamicSampling = dynamicSamplingSchema.parse(implied.dynamicSampling);
}

/**
 * With an `env:` block, the run's data are the env's slots (the task `env:<name>`, src/envs/task.ts):
 * data.task is set to it. @throws ConfigError (one line) when the env is unknown, or data.task,
 * data.train, data.verifier or reward is also set (the env makes and scores its own episodes), or a
 * field an env run never reads (data.template, chat, system, difficulty, …; rl.verifierPool), or
 * a stage that reads what slots lack (sft, guided, labelfree, methods).
 */
function withEnvSlots(raw: unknown, where: string): unknown {
  const o = raw as { env?: { name?: unknown }; data?: Record<string, unknown>; reward?: unknown } | null;
  if (!o || typeof o !== "object" || !o.env || typeof o.env !== "object" || typeof o.env.name !== "string") return raw;
  const fail = (at: string, why: string) => {
    throw new ConfigError(`config error in ${where} at ${at}: ${why}`);
  };
  try {
    getEnv(o.env.name);
  } catch (e) {
    fail("env.name", (e as Error).message);
  }
  const slots = envTaskName(o.env.name);
  for (const f of ["task", "train", "verifier"]) if (o.data?.[f] !== undefined && !(f === "task" && o.data[f] === slots)) fail(`data.${f}`, `env: "${o.env.name}" makes its own episodes and scores them; remove data.${f} (or the env block)`);
  if (o.reward !== undefined) fail("reward", `env: "${o.env.name}" scores its episodes with its step rewards; remove reward:`);
  // Fields an env run never reads (the env writes its own observations): inert, so refused.
  for (const f of ["test", "difficulty", "preset", "template", "chat", "system", "fields", "onBadRow"]) {
    // A resolved config (a run directory's config.yaml) carries the defaults: only a set value counts.
    if (o.data?.[f] !== undefined && o.data[f] !== defaultAt(`data.${f}`)) fail(`data.${f}`, `does nothing with env: "${o.env.name}" (the env writes its own observations; data.trainSize and data.testSize size its slots); remove it`);
  }
  // SFT and the methods read examples' prompts, answers and solutions, which env slots do not have.
  for (const f of ["sft", "guided", "labelfree", "methods"] as const) {
    if ((o as Record<string, unknown>)[f] !== undefined) fail(f, `cannot be combined with env: "${o.env.name}" yet (it reads examples' prompts, answers or solutions; an env's slots have none); remove ${f}: or the env block`);
  }
  const pool = (o as { rl?: { verifierPool?: { enabled?: unknown } } }).rl?.verifierPool;
  if (pool?.enabled === true) fail("rl.verifierPool", `does nothing with env: "${o.env.name}" (its episodes are scored by the env, not by verifiers); remove it or set enabled: false`);
  return { ...o, data: { ...o.data, task: envTaskName(o.env.name) } };
}

/**
 * The old spellings of `methods:`: `guided: {raft, relift, expert, kd}` and `labelfree: {ttrl,
 * ear, evol, selfPlay}` move under `methods:` (METHOD_ALIASES). Returns the config and, for each
 * moved key, the block it was spelled under (so option errors name the field as written). Also
 * applied to the config a checkpoint saved before `methods:` was the home (src/trainer/resume.ts).
 * @throws ConfigError (one line) for an unknown key in an alias block, or a method set in both places.
 */
export function withMethodAliases(raw: unknown, where: string): { raw: unknown; from: Map<string, string> } {
  const from = new Map<string, string>();
  const o = raw as Record<string, unknown> | null;
  if (!o || typeof o !== "object" || Array.isArray(o)) return { raw, from };
  const fail = (at: string, why: string) => {
    throw new ConfigError(`config error in ${where} at ${at}: ${why}`);
  };
  const own = o["methods"];
  // A malformed methods: block is left to the schema's error.
  if (own !== undefined && (own === null || typeof own !== "object" || Array.isArray(own))) return { raw, from };
  const methods: Record<string, unknown> = { ...(own as object | undefined) };
  const out: Record<string, unknown> = { ...o };
  for (const [alias, keys] of Object.entries(METHOD_ALIASES) as [string, readonly string[]][]) {
    const block = o[alias];
    delete out[alias];
    if (block === undefined || block === null) continue;
    if (typeof block !== "object" || Array.isArray(block)) fail(alias, `expected an object of methods (${keys.join(", ")}), got ${describe(block)}; it is the old spelling of methods:`);
    for (const [k, v] of Object.entries(block as Record<string, unknown>)) {
      if (!keys.includes(k)) fail(`${alias}.${k}`, `unknown field; ${alias}: holds ${keys.join(", ")}${suggest(k, [...keys]) ? ` (did you mean ${suggest(k, [...keys])}?)` : ""}`);
      if (v === undefined) continue;
      if (methods[k] !== undefined) fail(`${alias}.${k}`, `method "${k}" is configured twice, here and at methods.${k}; keep one (methods.${k} is the current spelling)`);
      methods[k] = v;
      from.set(k, alias);
    }
  }
  if (from.size) out["methods"] = methods;
  return { raw: out, from };
}

/**
 * Combinations checked by asking the registries what each named piece declares (an estimator's
 * `needsGroups`, a loss's `wholeBatch`, a method's `needs`), not by lists of names.
 * @throws ConfigError naming the field and the fix.
 */
function checkCapabilities(cfg: RunConfig, where: string): void {
  const fail = (path: string, why: string) => {
    throw new ConfigError(`config error in ${where} at ${path}: ${why}`);
  };
  const rl = cfg.rl!;
  const adv = cfg.algorithm!.advantage.name;
  if (rl.groupSize === 1) {
    if (getAdvantage(adv).needsGroups) {
      const batchLevel = listAdvantages().filter((n) => !getAdvantage(n).needsGroups);
      fail("rl.groupSize", `1 response per prompt needs an advantage that normalises over the batch (${batchLevel.join(", ")}, e.g. rl.algorithm: reinforce_pp); "${adv}" compares responses within a prompt's group, which a group of 1 does not have. Set rl.groupSize >= 2 or change the algorithm`);
    }
    // Rollout features defined on groups of responses.
    if (rl.dynamicSampling) fail("rl.dynamicSampling", "dynamic sampling drops groups whose responses all score the same, which every group of 1 does; set rl.groupSize >= 2 or remove it");
    if (rl.difficultyFilter) fail("rl.difficultyFilter", "the filter keeps groups by their pass rate, which a group of 1 cannot estimate; set rl.groupSize >= 2 or remove it");
    if (rl.tree) fail("rl.tree", "tree rollouts fork a group from shared roots; set rl.groupSize >= 2 or remove it");
  }
  const loss = cfg.algorithm!.loss.name;
  const perUpdate = Math.ceil((rl.promptsPerStep * rl.groupSize) / rl.miniBatches);
  if (getPolicyLoss(loss).wholeBatch && rl.microBatchSize !== undefined && rl.microBatchSize < perUpdate) {
    fail("rl.microBatchSize", `loss "${loss}" needs each optimizer update's ${perUpdate} sequences in one pass (its clip bounds are computed over the whole update); remove rl.microBatchSize, set it to at least ${perUpdate}, or raise rl.miniBatches`);
  }
  const enabling = Object.keys(cfg.methods ?? {}).length ? "methods" : rl.hints ? "rl.hints" : null;
  if (enabling && !checks.has("methods")) {
    fail(enabling, 'the method registry is not loaded, so the methods cannot be checked; import "rlvr" (or src/methods/index.ts) before parsing the config');
  }
  for (const check of checks.values()) {
    try {
      check(cfg);
    } catch (e) {
      const msg = (e as Error).message;
      throw new ConfigError(msg.startsWith("config error at ") ? `config error in ${where} at ${msg.slice("config error at ".length)}` : `config error in ${where}: ${msg}`);
    }
  }
}

const checks = new Map<string, (cfg: RunConfig) => void>();

/**
 * Register a check of a resolved run config that belongs to a layer above config/ (the method
 * registry registers `validateMethods` as "methods", src/methods/index.ts), so config/ runs it at
 * load without importing that layer. Runs for configs with an `rl` block, after the algorithm is
 * resolved; replaces a check of the same name. The check throws Error
 * "config error at <field>: <why and the fix>", which parseRunConfig reports naming the file.
 */
export function registerConfigCheck(name: string, check: (cfg: RunConfig) => void): void {
  checks.set(name, check);
}

/** Read and validate a YAML config file. @throws ConfigError naming the file, line (YAML syntax) or field. */
export function loadRunConfig(path: string): RunConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`cannot read config ${path}: ${(e as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    if (e instanceof YAMLParseError) {
      const line = e.linePos?.[0]?.line;
      throw new ConfigError(`config error in ${path}${line ? ` line ${line}` : ""}: invalid YAML (${e.message.split("\n")[0]})`);
    }
    throw e;
  }
  // Paths in the config resolve against its folder (src/config/paths.ts).
  return parseRunConfig(resolveConfigPaths(raw ?? {}, dirname(resolve(path))), path);
}
