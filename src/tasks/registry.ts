/**
 * The task registry: procedural tasks by name. Built-in tasks register themselves when
 * `src/tasks/index.ts` is imported; users add their own with `registerTask`.
 */
import type { Task } from "./types.ts";

const tasks = new Map<string, Task>();

/**
 * Register a task under `task.name` (or `name` when given).
 * @throws Error when the name is taken, unless `opts.replace` is true.
 */
export function registerTask(task: Task, opts: { name?: string; replace?: boolean } = {}): void {
  const name = opts.name ?? task.name;
  if (tasks.has(name) && !opts.replace) {
    throw new Error(`task "${name}" is already registered; pass { replace: true } to override it`);
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
    throw new Error(`unknown task "${name}"; known tasks: ${listTasks().join(", ")}`);
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
