/**
 * The task registry: procedural tasks by name. Built-in tasks register themselves when
 * `src/tasks/index.ts` is imported; users add their own with `registerTask`. A task's verifier is
 * registered in the one verifier registry (src/rewards/registry.ts) under the task's name: the
 * task registry holds generators, not a second verifier path.
 */
import { registerVerifier } from "../rewards/registry.ts";
import { BUILTIN_VERIFIER_NAMES } from "../rewards/config.ts";
import type { Task } from "./types.ts";
import { didYouMean } from "../util/suggest.ts";

const tasks = new Map<string, Task>();

/**
 * Register a task under `task.name` (or `name` when given).
 * Also registers `task.verify` as the verifier `name` (replacing a verifier of that name), unless
 * `name` is a built-in verifier's (exact, math, ifeval, …), which then scores the task.
 * @throws Error when the name is taken, unless `opts.replace` is true.
 */
export function registerTask(task: Task, opts: { name?: string; replace?: boolean } = {}): void {
  const name = opts.name ?? task.name;
  if (tasks.has(name) && !opts.replace) {
    throw new Error(`task "${name}" is already registered; pass { replace: true } to override it`);
  }
  // A task named like a built-in verifier (the ifeval task) is scored by that verifier, which reads
  // the same example fields; every other task's verifier is registered under its name.
  if (![...BUILTIN_VERIFIER_NAMES, "module"].includes(name)) {
    registerVerifier(name, { name, description: `the ${name} task's verifier`, verify: (response, example) => task.verify(response, example) }, { replace: true });
  }
  tasks.set(name, task);
}

/**
 * Look a task up by name.
 * @throws Error naming the known tasks when `name` is not registered.
 */
export function getTask(name: string): Task {
  const t = tasks.get(name);
  if (t === undefined) {
    throw new Error(`unknown task "${name}"; ${didYouMean(name, listTasks())}known tasks: ${listTasks().join(", ")} (a plugin can add more: plugins: in a config, or --plugin <file>)`);
  }
  return t;
}

/** Whether a task is registered under `name`. */
export function hasTask(name: string): boolean {
  return tasks.has(name);
}

/** Names of all registered tasks, sorted. */
export function listTasks(): string[] {
  return [...tasks.keys()].sort();
}
