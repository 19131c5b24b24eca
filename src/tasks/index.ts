/**
 * Tasks: procedural generators with difficulty knobs and verifiers, the task registry, and
 * dataset I/O. Importing this module registers the built-in tasks.
 */
import { registerTask, hasTask, getTask } from "./registry.ts";
import { addVerifierSource, getVerifier, hasVerifier, registerVerifier, type Verifier } from "../rewards/registry.ts";
import { asExample } from "../rewards/verifiers.ts";
import type { Verdict } from "../rewards/types.ts";
import { additionTask, arithmeticTask, paddedAdditionTask } from "./arithmetic.ts";
import { countdownTask } from "./countdown.ts";
import { knightsKnavesTask } from "./knights-knaves.ts";
import { satTask } from "./sat.ts";
import { sudokuTask } from "./sudoku.ts";
import { compactJigsawTask, jigsawTask } from "./jigsaw.ts";
import { graphTask } from "./graph.ts";
import { datesTask } from "./dates.ts";
import { ifevalTask } from "./ifeval.ts";
import { maximumTask } from "./maximum.ts";
import { scratchpadAdditionTask } from "./scratchpad.ts";
import { wordProblemsTask } from "./word-problems.ts";

export type { Task, Verdict } from "./types.ts";
export type { Example } from "../core/example.ts";
export * from "./registry.ts";
export * from "./rng.ts";
export * from "./split.ts";
export * from "./expr.ts";
export * from "./generate.ts";
export * from "./arithmetic.ts";
export * from "./countdown.ts";
export * from "./dataset.ts";
export * from "./answer.ts";
export * from "./knights-knaves.ts";
export * from "./sat.ts";
export * from "./sudoku.ts";
export * from "./jigsaw.ts";
export * from "./graph.ts";
export * from "./dates.ts";
export * from "../tokenizers/prompt-templates.ts";
export * from "./ifeval.ts";
export * from "./maximum.ts";
export * from "./scratchpad.ts";
export * from "./word-problems.ts";

for (const t of [additionTask, paddedAdditionTask, arithmeticTask, countdownTask, knightsKnavesTask, satTask, sudokuTask, jigsawTask, compactJigsawTask, graphTask, datesTask, ifevalTask, maximumTask, scratchpadAdditionTask, wordProblemsTask]) {
  if (!hasTask(t.name)) registerTask(t);
}

const task: Verifier = {
  name: "task",
  description: "the example's own task's verifier (a registered task's, else the verifier of that name)",
  verify: (r, e, ctx): Verdict | Promise<Verdict> => {
    if (e?.task && hasTask(e.task)) return getTask(e.task).verify(r, e);
    if (!e?.task || !hasVerifier(e.task) || e.task === "task") throw new Error(`example ${e?.id}: its task "${e?.task}" names no registered task or verifier`);
    return getVerifier(e.task).verify(r, e, ctx);
  },
};
if (!hasVerifier(task.name)) registerVerifier(task.name, { ...task, verify: (r, e, ctx) => task.verify(r, asExample(e), ctx) });

// A verifier-pool worker imports this module on the first name it does not know (kept out of its start-up).
addVerifierSource(import.meta.url);
