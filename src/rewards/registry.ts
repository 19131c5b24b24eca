/**
 * The verifier registry: every verifier by name, one place for training, `rlvr verify`, `rlvr eval`
 * and the worker-thread pool (src/rewards/pool/registry.ts is a view of this map).
 *
 * A verifier scores one response against one example and returns a `Verdict`. Built-in ones
 * (exact, f1, choice, math, format, ifeval, code, majority) register when ./verifiers.ts is
 * imported; each procedural task registers its own under the task's name (src/tasks/registry.ts);
 * users add theirs with `registerVerifier` or `defineReward`, and a run config names any of them
 * (`reward: {verifier: name}`).
 */
import type { ZodType } from "zod";
import type { Example } from "../core/example.ts";
import type { Verdict } from "./types.ts";
import { didYouMean } from "../util/suggest.ts";

export type { Verdict } from "./types.ts";

/** What a verifier is told besides the response and the example. */
export interface VerifyContext {
  /** The training step (absent outside training). */
  step?: number;
  /** The verifier's options from the config (`reward.options`, `components[i].options`). */
  options?: unknown;
  /**
   * The reward at or above which a verdict that does not say `correct` itself counts as correct
   * (`reward.correctAt`, default 1): a reward function returning a bare number, or `{reward}`
   * without `correct`. Partial credit below it is reward, never accuracy.
   */
  correctAt?: number;
}

/** What a group-aware verifier is told: the context plus each response's length in tokens. */
export interface GroupVerifyContext extends VerifyContext {
  lengths: number[];
  truncated: boolean[];
}

/**
 * A verifier.
 * - `verify(response, example, ctx)`: sync or async; must not throw for anything a response
 *   contains (malformed responses score 0); may throw for a broken example or bad options (the
 *   reward stage counts that as `reward/errors/<component>` and gives the fallback reward).
 * - `group(responses, examples, ctx)` (optional): scores a whole group of responses to one
 *   prompt at once (majority voting, group-relative rewards). When set, the reward stage uses it
 *   instead of `verify` in a run; `verify` still serves single responses (eval, `rlvr verify`).
 * - `checkOptions(options, at)` (optional): validate config options once at load time; throw an
 *   Error whose message starts with `at` (e.g. "config error at reward.options.threshold: …").
 * - `exampleSchema` (optional): a zod schema of the example fields the verifier reads (tests,
 *   constraints, reference answers), checked against every row when a dataset loads for a run,
 *   `rlvr eval`, `rlvr verify` and `rlvr verify-audit` (./example-schema.ts): a row that does not
 *   match is a data error naming file, line and field (or skipped and counted under
 *   `data.onBadRow: skip`) and is never graded. It parses the whole `Example` ({id, prompt,
 *   answer, task, meta, …}); use loose objects so fields other verifiers read pass through.
 */
export interface Verifier<E = Example> {
  name: string;
  /** One line for `rlvr verify --help` and config errors. */
  description?: string;
  verify(response: string, example: E, ctx?: VerifyContext): Verdict | Promise<Verdict>;
  group?(responses: string[], examples: E[], ctx: GroupVerifyContext): (Verdict | number | null)[] | Promise<(Verdict | number | null)[]>;
  checkOptions?(options: unknown, at: string): void;
  exampleSchema?: ZodType;
}

/** A verifier given as a bare function (wrapped into a `Verifier` by registerVerifier). */
export type VerifyFn<E = Example> = (response: string, example: E, ctx?: VerifyContext) => Verdict | Promise<Verdict>;

const verifiers = new Map<string, Verifier<any>>();

/**
 * Register a verifier under `name` in this thread (worker threads import the same modules, so
 * they register the same names).
 * @param verifier a Verifier object, or a function `(response, example, ctx) → Verdict`
 * @param opts.exampleSchema the schema of the example fields a bare function reads (a Verifier
 *   object carries its own `exampleSchema`)
 * @throws Error when `name` is empty, or taken by a different verifier and `opts.replace` is not
 *   set (registering the same object twice is a no-op)
 */
export function registerVerifier<E = Example>(name: string, verifier: Verifier<E> | VerifyFn<E>, opts: { replace?: boolean; exampleSchema?: ZodType } = {}): Verifier<E> {
  if (typeof name !== "string" || name.trim() === "") throw new Error("registerVerifier: expected a non-empty name");
  const v: Verifier<E> = typeof verifier === "function" ? { name, verify: verifier, ...(opts.exampleSchema ? { exampleSchema: opts.exampleSchema } : {}) } : verifier;
  if (typeof v.verify !== "function") throw new Error(`registerVerifier("${name}"): the verifier has no verify(response, example, ctx) function`);
  const old = verifiers.get(name);
  if (old && old !== v && !opts.replace && !(typeof verifier === "function" && old.verify === verifier)) {
    throw new Error(`verifier "${name}" is already registered; pass { replace: true } to override it`);
  }
  verifiers.set(name, v);
  return v;
}

/**
 * The verifier registered under `name`.
 * @throws Error naming the registered verifiers when there is none
 */
export function getVerifier(name: string): Verifier<any> {
  const v = verifiers.get(name);
  if (!v) throw new Error(`unknown verifier "${name}"; ${didYouMean(name, verifierNames())}registered verifiers: ${verifierNames().join(", ")} (a plugin can add more: plugins: in a config, or --plugin <file>)`);
  return v;
}

/** The verifier registered under `name`, or undefined. */
export function findVerifier(name: string): Verifier<any> | undefined {
  return verifiers.get(name);
}

/** Whether a verifier is registered under `name`. */
export function hasVerifier(name: string): boolean {
  return verifiers.has(name);
}

/** Names registered in this thread, sorted. */
export function verifierNames(): string[] {
  return [...verifiers.keys()].sort();
}

const sources = new Set<string>();

/**
 * Name a module (file URL) that registers more verifiers when imported — the procedural tasks
 * name themselves (src/tasks/index.ts). A verifier-pool worker is told these and imports them on
 * the first verifier name it does not know, instead of at start-up (src/rewards/pool/registry.ts).
 */
export function addVerifierSource(moduleUrl: string): void {
  sources.add(moduleUrl);
}

/** The modules named with addVerifierSource in this thread, in order. */
export function verifierSources(): string[] {
  return [...sources];
}

/** What a user reward function may return (see toVerdict). */
export type RewardReturn = number | boolean | null | undefined | (Partial<Verdict> & Record<string, unknown>);

/**
 * Turn what a user reward function returned into a Verdict.
 * - a finite number → reward (correct when ≥ `correctAt`, default 1); a boolean → 1/0;
 * - an object with a finite numeric `reward` (other Verdict fields optional; `correct` defaults
 *   to reward ≥ `correctAt`), or with only a boolean `correct` (reward 1/0);
 * - null / undefined → the sample is skipped: reward NaN, reason "skipped".
 * @throws Error describing the value for anything else (NaN/±Infinity, strings, arrays, objects
 *   without reward/correct); the reward stage counts it as `reward/errors/<component>`.
 */
export function toVerdict(value: RewardReturn | unknown, who = "reward function", correctAt = 1): Verdict {
  if (value === null || value === undefined) return { correct: false, reward: NaN, extracted: null, reason: "skipped" };
  if (typeof value === "boolean") return { correct: value, reward: value ? 1 : 0, extracted: null, reason: value ? "true" : "false" };
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`${who} returned ${value}; expected a finite number`);
    return { correct: value >= correctAt, reward: value, extracted: null, reason: `reward ${value}` };
  }
  if (typeof value === "object" && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    if (o.reward !== undefined) {
      if (typeof o.reward !== "number" || !Number.isFinite(o.reward)) throw new Error(`${who} returned reward ${describe(o.reward)}; expected a finite number`);
      const reward = o.reward;
      return {
        ...o,
        correct: typeof o.correct === "boolean" ? o.correct : reward >= correctAt,
        reward,
        extracted: typeof o.extracted === "string" ? o.extracted : null,
        reason: typeof o.reason === "string" ? o.reason : `reward ${reward}`,
      } as Verdict;
    }
    if (typeof o.correct === "boolean") {
      return { ...o, correct: o.correct, reward: o.correct ? 1 : 0, extracted: typeof o.extracted === "string" ? o.extracted : null, reason: typeof o.reason === "string" ? o.reason : String(o.correct) } as Verdict;
    }
    throw new Error(`${who} returned an object without a numeric "reward" or boolean "correct" (keys: ${Object.keys(o).join(", ") || "none"})`);
  }
  throw new Error(`${who} returned ${describe(value)}; expected a number, a boolean, {reward, …} or null`);
}

function describe(v: unknown): string {
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 39) + "…" : v)}`;
  if (Array.isArray(v)) return "an array";
  if (typeof v === "number") return String(v);
  return typeof v;
}

/** A reward function as users write it (TRL's `reward_funcs`, one response at a time). */
export type RewardFunction<E = Example> = (response: string, example: E, ctx: VerifyContext) => RewardReturn | Promise<RewardReturn>;

/**
 * Define a reward from a plain function and register it, so a run config can name it
 * (`reward: {verifier: <name>}`, or a component's `verifier:`).
 * @param def.name  registry name
 * @param def.score `(response, example, {step, options}) → number | boolean | {reward, …} | null`
 *                  (sync or async; null skips the sample), see toVerdict
 * @param def.group optional group-aware form (see Verifier.group)
 * @param def.exampleSchema optional zod schema of the example fields `score` reads; rows that do
 *                  not match are refused at load (see Verifier.exampleSchema)
 * @returns the registered Verifier
 * @throws Error when the name is taken (pass `replace: true` to override)
 * @example defineReward({ name: "short", score: (r) => (r.length < 50 ? 1 : 0) })
 */
export function defineReward<E = Example>(def: {
  name: string;
  description?: string;
  score: RewardFunction<E>;
  group?: Verifier<E>["group"];
  checkOptions?: Verifier<E>["checkOptions"];
  exampleSchema?: ZodType;
  replace?: boolean;
}): Verifier<E> {
  const v: Verifier<E> = {
    name: def.name,
    description: def.description,
    // Synchronous when `score` is, so eval and the guided methods can score in line.
    verify: (response, example, ctx = {}) => {
      const who = `reward "${def.name}"`;
      const value = def.score(response, example, ctx);
      const at = ctx.correctAt ?? 1;
      return value && typeof (value as PromiseLike<unknown>).then === "function" ? Promise.resolve(value).then((v) => toVerdict(v, who, at)) : toVerdict(value, who, at);
    },
    ...(def.group ? { group: def.group } : {}),
    ...(def.checkOptions ? { checkOptions: def.checkOptions } : {}),
    ...(def.exampleSchema ? { exampleSchema: def.exampleSchema } : {}),
  };
  return registerVerifier(def.name, v, { replace: def.replace });
}
