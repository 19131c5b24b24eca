/**
 * `rlvr/tasks`: procedural tasks with difficulty knobs (addition, countdown, sudoku, …), the task
 * registry and defineTask, dataset loading (JSONL, Parquet) and prompt templates (docs/tasks.md).
 * Importing it registers the built-in tasks.
 */
export * from "../tasks/index.ts";
export { defineTask, toTaskVerdict, type TaskSpec, type ExampleDraft, type TaskScore } from "../tasks/define.ts";
