/**
 * The env registry: environments by name. `defineEnv` registers one (a plugin's `plugins:` entry
 * calls it, so a config's `env.name` can name it); `getEnv` fails closed on an unknown name.
 */
import { didYouMean } from "../util/suggest.ts";
import { registerTask } from "../tasks/registry.ts";
import { envSlotTask } from "./task.ts";
import type { Env, EnvDefinition, EnvEpisode, EnvGroup } from "./types.ts";

const envs = new Map<string, EnvDefinition>();

/**
 * Define and register an environment (and its slots as the task `env:<name>`, src/envs/task.ts), e.g.
 * ```ts
 * defineEnv({ name: "guess", description: "find a number", group: (s) => envGroup(s.groupSize, () => new GuessEnv(...)) });
 * ```
 * @returns the definition (for tests and direct `envRollouts` use)
 * @throws Error when the name is empty or taken (unless `opts.replace`), or `group` is not a function
 */
export function defineEnv(def: EnvDefinition, opts: { replace?: boolean } = {}): EnvDefinition {
  if (!/^[A-Za-z][A-Za-z0-9_.:-]*$/.test(def.name ?? "")) throw new Error(`defineEnv: name must be a letter followed by letters, digits, _ . : -; got ${JSON.stringify(def.name)}`);
  if (typeof def.group !== "function") throw new Error(`defineEnv("${def.name}"): group must be a function (spec) => {envs, groupReward?}`);
  if (envs.has(def.name) && !opts.replace) throw new Error(`env "${def.name}" is already registered; pass { replace: true } to override it`);
  envs.set(def.name, def);
  registerTask(envSlotTask(def), { replace: true });
  return def;
}

/**
 * Look an env up by name.
 * @throws Error (one line) naming the registered envs when `name` is unknown.
 */
export function getEnv(name: string): EnvDefinition {
  const e = envs.get(name);
  if (!e) throw new Error(`unknown env "${name}"; ${didYouMean(name, listEnvs())}registered envs: ${listEnvs().join(", ") || "(none)"} (defineEnv in a plugin adds one: plugins: in a config)`);
  return e;
}

/** Whether an env is registered under `name`. */
export function hasEnv(name: string): boolean {
  return envs.has(name);
}

/** Names of all registered envs, sorted. */
export function listEnvs(): string[] {
  return [...envs.keys()].sort();
}

/**
 * A group of `n` envs from `make(j)` (j = 0..n-1), with an optional group reward.
 * @throws Error when n is not a positive integer
 */
export function envGroup(n: number, make: (j: number) => Env, groupReward?: (episodes: readonly EnvEpisode[]) => number[] | Promise<number[]>): EnvGroup {
  if (!Number.isInteger(n) || n < 1) throw new Error(`envGroup: n must be a positive integer, got ${n}`);
  const g: EnvGroup = { envs: Array.from({ length: n }, (_, j) => make(j)) };
  if (groupReward) g.groupReward = groupReward;
  return g;
}
