/**
 * Methods as objects: a guided or label-free method (TTRL, EVOL-RL, ETTRL's EAR, ReLIFT, LUFFY,
 * CHORD, KDRL, RAFT, self-play, or one of yours) is one `Method`, registered like a loss or an
 * advantage estimator. It declares
 *   - where a run config enables it (`options(cfg)`; user methods: the config's `methods` block),
 *   - what it needs (`needs`), which config validation asks instead of keeping lists of names,
 *   - which stages of the RL step it transforms (`stages`) and its place among the transforms of
 *     a stage (`order`: lower runs first; ties keep registration order),
 * and builds the hooks that do the work (src/pipeline/hooks.ts: rewards, advantages, loss,
 * extraBackward, stepMetrics, step, afterStep, init, close, saveState/restoreState).
 *
 * Anchors: verl's registries of core algorithms; TRL's callbacks, but declared up front.
 */
import type { RunConfig } from "../config/schema.ts";
import type { RunContext } from "../pipeline/context.ts";
import type { RlStageHooks } from "../pipeline/hooks.ts";

/** Stages of the RL step a method may transform (src/pipeline/). `step` replaces the whole step. */
export type MethodStage = "init" | "collect" | "reward" | "reference" | "advantages" | "optimize" | "metrics" | "after" | "step";

/** What a method needs from the rest of the run; `validateMethods` checks these. */
export interface MethodNeeds {
  /** Compares several responses per prompt (votes, group statistics): refuses rl.groupSize 1. */
  groups?: boolean;
  /** Reads or reshapes sequence-level advantages: refuses token-level estimators (REINFORCE++). */
  sequenceAdvantages?: boolean;
  /** Occupies the reference-model slot (KDRL's teacher): refuses a KL penalty and reference resets. */
  referenceSlot?: boolean;
  /**
   * Changes the weights outside the RL step's optimize stage or replaces the step (ReLIFT's SFT
   * steps, RAFT, self-play): refuses rl.async, whose prefetched batches assume one policy
   * version per step.
   */
  synchronous?: boolean;
}

/** A registered method. */
export interface Method<O = unknown> {
  name: string;
  /** The config field that enables it, used in messages (e.g. "labelfree.ttrl"). */
  configPath: string;
  /** Its options in `cfg`, or undefined when `cfg` does not enable it. */
  options(cfg: RunConfig): O | undefined;
  needs: MethodNeeds;
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
 * @throws TypeError on a malformed name or a missing `build`.
 */
export function defineMethod<O = Record<string, unknown>>(spec: MethodSpec<O>): Method<O> {
  if (typeof spec.name !== "string" || !/^[A-Za-z0-9_.:+-]+$/.test(spec.name)) throw new TypeError(`defineMethod: name must be an identifier (letters, digits, _ . : + -), got ${JSON.stringify(spec.name)}`);
  if (typeof spec.build !== "function") throw new TypeError(`defineMethod("${spec.name}"): build must be a function returning the method's hooks`);
  const m: Method<O> = {
    configPath: `methods.${spec.name}`,
    options: (cfg) => (cfg.methods?.[spec.name] as O | undefined),
    needs: {},
    order: 100,
    ...spec,
  };
  const i = registry.findIndex((x) => x.name === m.name);
  if (i >= 0) registry[i] = m as Method<never>;
  else registry.push(m as Method<never>);
  return m;
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
