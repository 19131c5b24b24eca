/**
 * `defineTask`: a user's task in one object — how to make an example and how to score a response —
 * registered under its name, so a run config (`data.task: <name>`), `rlvr data gen <name>` and
 * `train()` can all use it. A thin layer over `registerTask` (src/tasks/registry.ts) that fills
 * in what a small task does not care about: example ids, the task field, a difficulty range, and
 * a verdict from a plain boolean or number.
 *
 *   defineTask({
 *     name: "double",
 *     sample: (rng) => { const x = rng.int(0, 49); return { prompt: `${x}*2=`, answer: String(2 * x) }; },
 *     verify: (response, ex) => response.trim() === ex.answer,
 *   });
 *
 * With `sample`, train and test are disjoint by construction: candidates are drawn from a seeded
 * stream until one falls in the requested split of a hash partition of prompts (src/tasks/split.ts,
 * 10% of the prompt space is test). With `generate`, the task makes each example itself.
 */
import { registerTask } from "./registry.ts";
import type { Rng } from "./rng.ts";
import { generateInSplit, type Candidate } from "./split.ts";
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";

/** What `generate` may return: a full Example, or just its prompt and answer (plus any other fields). */
export type ExampleDraft = Omit<Example, "id" | "task"> & Partial<Pick<Example, "id" | "task">>;

/** What `verify` may return: a Verdict, a boolean (correct or not), or a reward in [0, 1] (1 = correct). */
export type TaskScore = Verdict | boolean | number;

export interface TaskSpec {
  /** Registry name: what `data.task` and `rlvr data gen` use. */
  name: string;
  /** The difficulty knob (default: none, `{min: 0, max: 0, default: 0}`). */
  difficulties?: Task["difficulties"];
  /**
   * One random instance (prompt, answer, optional meta/solution) drawn from `rng`; deterministic
   * given the rng. rlvr seeds it per example and keeps train and test prompts disjoint. Give this
   * or `generate`.
   */
  sample?(rng: Rng, opts: { difficulty: number }): Candidate;
  /**
   * Example `index` of `split` at `difficulty` from `seed`; deterministic. Keep the splits disjoint
   * (e.g. different index streams per split) so held-out accuracy measures generalisation. Give
   * this or `sample`.
   */
  generate?(opts: { seed: number; index: number; difficulty: number; split: "train" | "test" }): ExampleDraft;
  /** Score a response: true/false, a reward in [0, 1], or a full Verdict. May throw; a throw scores 0. */
  verify(response: string, example: Example): TaskScore;
  /** Replace a task already registered under `name` (default: refuse). */
  replace?: boolean;
}

/**
 * Turn what a task's verify returned into a Verdict.
 * @throws Error naming the task and example when the value is not a boolean, a finite number in
 *   [0, 1] or a Verdict (a bug in the task, reported once rather than trained on).
 */
export function toTaskVerdict(value: unknown, task: string, example: Example): Verdict {
  if (typeof value === "boolean") return { correct: value, reward: value ? 1 : 0, extracted: null, reason: value ? "ok" : "wrong" };
  if (typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 1) {
    return { correct: value >= 1, reward: value, extracted: null, reason: value >= 1 ? "ok" : `partial ${value}` };
  }
  const v = value as Partial<Verdict> | null;
  if (v && typeof v === "object" && typeof v.correct === "boolean" && Number.isFinite(v.reward)) {
    return { extracted: null, reason: v.correct ? "ok" : "wrong", ...v } as Verdict;
  }
  const shown = typeof value === "number" ? String(value) : JSON.stringify(value);
  throw new Error(`task "${task}": verify returned ${shown} for example ${example.id}; return true/false, a reward in [0, 1], or {correct, reward}`);
}

/**
 * Define and register a task.
 * @returns the registered Task (its `generate` fills `id` as `<name>-<split>-d<difficulty>-<index>`
 *   and `task` as the name when the draft has none; its `verify` never throws on a response: a
 *   throwing verify scores 0 with the error as the reason).
 * @throws Error when `name` is already registered and `replace` is not set, or when verify returns
 *   something that is not a score (see toTaskVerdict).
 */
export function defineTask(spec: TaskSpec): Task {
  const name = spec.name;
  if (!name || typeof name !== "string") throw new Error("defineTask: set name to a non-empty string (what data.task will name)");
  if ((spec.sample === undefined) === (spec.generate === undefined)) throw new Error(`defineTask "${name}": give exactly one of sample(rng) and generate({seed, index, difficulty, split})`);
  const task: Task = {
    name,
    difficulties: spec.difficulties ?? { min: 0, max: 0, default: 0, description: "no difficulty knob" },
    generate(opts) {
      if (spec.sample) return generateInSplit(name, opts, (rng) => spec.sample!(rng, { difficulty: opts.difficulty }));
      const draft = spec.generate!(opts);
      const id = draft.id ?? `${name}-${opts.split}-d${opts.difficulty}-${String(opts.index).padStart(6, "0")}`;
      return { ...draft, id, task: draft.task ?? name, difficulty: draft.difficulty ?? opts.difficulty };
    },
    // A verify that throws is a reward error (counted, warned about, and fatal past
    // reward.maxErrorRate; src/rewards/compile.ts), never a silent 0.
    verify: (response, example) => toTaskVerdict(spec.verify(response, example), name, example),
  };
  registerTask(task, { replace: spec.replace });
  return task;
}
