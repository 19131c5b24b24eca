/**
 * The unit of data every layer passes around: one prompt with its reference answer and what a
 * verifier needs to score responses to it. Tasks generate examples, datasets load them.
 */

/** One prompt with what is needed to score responses to it. */
export interface Example {
  /** Stable id (unique within a dataset), e.g. "addition-d3-000017". */
  id: string;
  /** The question text shown to the model (before any chat template / prompt template). */
  prompt: string;
  /** Reference answer as a string (the verifier decides what "equal" means). */
  answer: string;
  /** Name of the task that made or owns the example (selects the verifier). */
  task: string;
  /** Difficulty level the example was generated at (procedural tasks), if any. */
  difficulty?: number;
  /** Task-specific data the verifier needs (e.g. Countdown numbers and target). JSON-serialisable. */
  meta?: Record<string, unknown>;
  /** Worked solution, when known (for SFT warm-up, hints, demonstrations). */
  solution?: string;
}
