/**
 * Methods as objects: a guided or label-free method (TTRL, EVOL-RL, ETTRL's EAR, ReLIFT, LUFFY,
 * CHORD, KDRL, RAFT, self-play, or one of yours) is one `Method`, registered like a loss or an
 * advantage estimator. It declares
 *   - where a run config enables it (`options(cfg)`; user methods: the config's `methods` block),
 *   - what it needs (`needs`), which config validation asks instead of keeping lists of names,
 *   - which stages of the RL step it transforms (`stages`) and its place among the transforms of
 *     a stage (`order`: lower runs first; ties keep registration order),
 * and builds the hooks that do the work (src/pipeline/hooks.ts: rewards, advantages, loss,
 * extraBackward, stepMetrics, source, collect, afterStep, init, close, saveState/restoreState).
 *
 * Anchors: verl's registries of core algorithms; TRL's callbacks, but declared up front.
 */
import type { RunConfig } from "../config/schema.ts";
import type { RunContext } from "../pipeline/context.ts";
import type { RlStageHooks } from "../pipeline/hooks.ts";

/** Stages of the RL step a method may transform (src/pipeline/). No method replaces the step. */
export type MethodStage = "init" | "collect" | "reward" | "reference" | "advantages" | "optimize" | "metrics" | "after";

const STAGES: readonly MethodStage[] = ["init", "collect", "reward", "reference", "advantages", "optimize", "metrics", "after"];

/**
 * The stage each hook of RlStageHooks transforms (`null`: lifecycle hooks, allowed in any method).
 * A method's built hooks must stay within its declared `stages` (checked on every build).
 */
export const HOOK_STAGES: Readonly<Record<keyof RlStageHooks, MethodStage | null>> = {
  init: "init",
  source: "collect",
  collect: "collect",
  rewards: "reward",
  advantages: "advantages",
  loss: "optimize",
  extraBackward: "optimize",
  stepMetrics: "metrics",
  afterStep: "after",
  close: null,
  saveState: null,
  restoreState: null,
};

/** What a method needs from the rest of the run; `validateMethods` checks these. */
export interface MethodNeeds {
  /** Compares several responses per prompt (votes, group statistics): refuses rl.groupSize 1. */
  groups?: boolean;
  /** Reads or reshapes sequence-level advantages: refuses token-level estimators (REINFORCE++). */
  sequenceAdvantages?: boolean;
  /** Occupies the reference-model slot (KDRL's teacher): refuses a KL penalty and reference resets. */
  referenceSlot?: boolean;
  /**
   * Changes the weights outside the RL step's optimize stage (ReLIFT's SFT steps): refuses
   * rl.async, whose prefetched batches assume one policy version per step.
   */
  synchronous?: boolean;
}

/** A registered method. */
export interface Method<O = unknown> {
  name: string;
  /** The config field that enables it, used in messages (e.g. "methods.ttrl"). */
  configPath: string;
  /** Its options in `cfg`, or undefined when `cfg` does not enable it. */
  options(cfg: RunConfig): O | undefined;
  needs: MethodNeeds;
  /**
   * The stages its hooks transform (see HOOK_STAGES). Enforced: a built hook of an undeclared
   * stage is a TypeError naming the method and the hook, so readers can trust the declaration.
   */
  stages: readonly MethodStage[];
  order: number;
  /** Further checks against the rest of the config. @throws Error "config error at <path>: <why and fix>". */
  validate?(cfg: RunConfig, options: O): void;
  /** The hooks that implement the method in a run. */
  build(ctx: RunContext, options: O): RlStageHooks;
}

/** What `defineMethod` takes: a Method with defaults for configPath, options, needs and order. */
export type MethodSpec<O> = Omit<Method<O>, "configPath" | "options" | "needs" | "order"> & Partial<Pick<Method<O>, "configPath" | "options" | "needs" | "order">>;

const registry: Method<never>[] = [];

/**
 * Define a method and register it (replacing one of the same name).
 * Without `options`, the method is enabled by `methods: {<name>: {...}}` in the run config and
 * receives that block; `configPath` defaults to `methods.<name>`; `order` to 100.
 * The registered `build` checks the hooks it returns against `stages` (HOOK_STAGES).
 * @throws TypeError on a malformed name, a missing `build` or an unknown stage; its `build` throws
 *   TypeError for a hook of an undeclared stage or an unknown hook name.
 */
export function defineMethod<O = Record<string, unknown>>(spec: MethodSpec<O>): Method<O> {
  if (typeof spec.name !== "string" || !/^[A-Za-z0-9_.:+-]+$/.test(spec.name)) throw new TypeError(`defineMethod: name must be an identifier (letters, digits, _ . : + -), got ${JSON.stringify(spec.name)}`);
  if (typeof spec.build !== "function") throw new TypeError(`defineMethod("${spec.name}"): build must be a function returning the method's hooks`);
  const bad = Array.isArray(spec.stages) ? spec.stages.filter((s) => !STAGES.includes(s)) : [spec.stages];
  if (bad.length) throw new TypeError(`defineMethod("${spec.name}"): stages must be a list of ${STAGES.join(", ")}; got ${JSON.stringify(bad[0])}`);
  const m: Method<O> = {
    configPath: `methods.${spec.name}`,
    options: (cfg) => (cfg.methods?.[spec.name] as O | undefined),
    needs: {},
    order: 100,
    ...spec,
    build: (ctx, options) => checkHookStages(spec.name, spec.stages, spec.build(ctx, options)),
  };
  const i = registry.findIndex((x) => x.name === m.name);
  if (i >= 0) registry[i] = m as Method<never>;
  else registry.push(m as Method<never>);
  return m;
}

/**
 * The hooks a method built, checked against the stages it declared.
 * @throws TypeError naming the method, the hook and the fix, for a hook of an undeclared stage or an unknown hook name.
 */
function checkHookStages(name: string, stages: readonly MethodStage[], hooks: RlStageHooks): RlStageHooks {
  for (const [k, fn] of Object.entries(hooks)) {
    if (fn === undefined) continue;
    if (!Object.hasOwn(HOOK_STAGES, k)) throw new TypeError(`defineMethod("${name}"): build returned an unknown hook "${k}"; hooks are ${Object.keys(HOOK_STAGES).join(", ")}`);
    const stage = HOOK_STAGES[k as keyof RlStageHooks];
    if (stage !== null && !stages.includes(stage)) throw new TypeError(`defineMethod("${name}"): its hook "${k}" transforms the ${stage} stage, which its stages [${stages.join(", ")}] do not declare; add "${stage}" to stages`);
  }
  return hooks;
}

/** Every registered method, in registration order. */
export function listMethods(): readonly Method<unknown>[] {
  return registry as Method<unknown>[];
}

/** The method registered as `name`. @throws Error naming the registered methods. */
export function getMethod(name: string): Method<unknown> {
  const m = registry.find((x) => x.name === name);
  if (!m) throw new Error(`unknown method "${name}"; registered: ${registry.map((x) => x.name).join(", ")}`);
  return m as Method<unknown>;
}

/** The methods `cfg` enables with their options, sorted by `order` (stable). */
export function enabledMethods(cfg: RunConfig): { method: Method<unknown>; options: unknown }[] {
  const out: { method: Method<unknown>; options: unknown }[] = [];
  for (const m of registry as Method<unknown>[]) {
    const o = m.options(cfg);
    if (o !== undefined && o !== null && o !== false) out.push({ method: m, options: o });
  }
  return out.sort((a, b) => a.method.order - b.method.order);
}
