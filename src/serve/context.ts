/** What every route of `rlvr serve` shares: the engine, its tokenizer, the batcher, capture. */
import type { Engine } from "../core/engine.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Batcher } from "./batcher.ts";
import type { EpisodeStore } from "./capture.ts";

export interface ServeContext {
  engine: Engine;
  tokenizer: Tokenizer;
  /** The model id clients name in `model` (and /v1/models lists). */
  modelName: string;
  batcher: Batcher;
  /** Capture mode: where completions are recorded by episode (null when off). */
  episodes: EpisodeStore | null;
  /** Unix seconds the server started (the model's `created`). */
  created: number;
  /** Optimizer updates applied to the served weights (capture training bumps it). */
  policyVersion: number;
  /** Whether POST /v1/rlvr/weights may load a checkpoint from disk (off by default). */
  weightSync: boolean;
  /** Capture-training updates so far (the learning-rate warm-up's position; saved and restored). */
  captureUpdates: number;
  /** Capture mode: save weights + optimizer + counters to `dir` every `every` updates and on close (./state.ts). */
  autosave: { dir: string; every: number } | null;
  /** `captureUpdates` at the last save. */
  savedAt: number;
}
