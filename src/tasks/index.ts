/**
 * Tasks: procedural generators with difficulty knobs and verifiers, the task registry, and
 * dataset I/O. Importing this module registers the built-in tasks.
 */
import { registerTask, hasTask } from "./registry.ts";
import { additionTask, arithmeticTask } from "./arithmetic.ts";
import { countdownTask } from "./countdown.ts";

export type { Example, Task, Verdict } from "./types.ts";
export * from "./registry.ts";
export * from "./rng.ts";
export * from "./split.ts";
export * from "./expr.ts";
export * from "./generate.ts";
export * from "./arithmetic.ts";
export * from "./countdown.ts";
export * from "./dataset.ts";

for (const t of [additionTask, arithmeticTask, countdownTask]) {
  if (!hasTask(t.name)) registerTask(t);
}
