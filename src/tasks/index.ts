/**
 * Tasks: procedural generators with difficulty knobs and verifiers, the task registry, and
 * dataset I/O. Importing this module registers the built-in tasks.
 */
import { registerTask, hasTask } from "./registry.ts";
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
