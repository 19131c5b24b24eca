/**
 * Prompt curriculum over a task's difficulty knob: raise the difficulty when the rolling training
 * accuracy reaches a threshold, lower it when the rolling accuracy falls to another. A threshold
 * schedule in the spirit of the accuracy-driven curricula of Logic-RL / Kimi k1.5 (arXiv:2501.12599,
 * §2.3.3 "curriculum sampling") and of balanced difficulty filtering (arXiv:2504.03380): keep the
 * policy on prompts it solves sometimes.
 *
 * Rule, after each RL step with training accuracy a (fraction of the step's sampled responses
 * that were correct, in [0, 1]):
 *   recent ← last `window` accuracies (a appended)
 *   if |recent| = window and mean(recent) ≥ raiseAbove and d < max: d ← min(max, d + step); recent ← []
 *   elif |recent| = window and mean(recent) ≤ lowerBelow and d > min: d ← max(min, d − step); recent ← []
 * The window is cleared after every move, so the next move waits for `window` steps at the new level.
 */

/** Curriculum settings (rl.curriculum). */
export interface CurriculumOptions {
  /** Lowest and highest difficulty (inclusive integers). */
  min: number;
  max: number;
  /** Steps of accuracy the rolling mean covers (≥ 1). */
  window: number;
  /** Raise when the rolling mean is ≥ this (in [0, 1]). */
  raiseAbove: number;
  /** Lower when the rolling mean is ≤ this (in [0, 1], < raiseAbove). */
  lowerBelow: number;
  /** Difficulty change per move (≥ 1). */
  step: number;
}

/** The curriculum's state (checkpointed as is: JSON-serialisable). */
export interface CurriculumState {
  difficulty: number;
  /** Training accuracies since the last move, newest last (at most `window`). */
  recent: number[];
}

/**
 * Start a curriculum at `start` (clamped to [min, max]).
 * @throws RangeError when min > max or the thresholds are not ordered.
 */
export function initCurriculum(start: number, o: CurriculumOptions): CurriculumState {
  if (o.min > o.max) throw new RangeError(`curriculum: min ${o.min} > max ${o.max}`);
  if (!(o.lowerBelow < o.raiseAbove)) throw new RangeError(`curriculum: lowerBelow ${o.lowerBelow} must be < raiseAbove ${o.raiseAbove}`);
  return { difficulty: Math.min(o.max, Math.max(o.min, start)), recent: [] };
}

/**
 * Record one step's training accuracy and move the difficulty if the rule says so.
 * A non-finite accuracy is ignored. Does not mutate `st`.
 * @returns the new state and the move (+1 raised, −1 lowered, 0 stayed).
 */
export function updateCurriculum(st: CurriculumState, accuracy: number, o: CurriculumOptions): { state: CurriculumState; moved: -1 | 0 | 1 } {
  if (!Number.isFinite(accuracy)) return { state: st, moved: 0 };
  const recent = [...st.recent, accuracy].slice(-o.window);
  if (recent.length >= o.window) {
    const mean = recent.reduce((a, b) => a + b, 0) / recent.length;
    if (mean >= o.raiseAbove && st.difficulty < o.max) return { state: { difficulty: Math.min(o.max, st.difficulty + o.step), recent: [] }, moved: 1 };
    if (mean <= o.lowerBelow && st.difficulty > o.min) return { state: { difficulty: Math.max(o.min, st.difficulty - o.step), recent: [] }, moved: -1 };
  }
  return { state: { difficulty: st.difficulty, recent }, moved: 0 };
}
