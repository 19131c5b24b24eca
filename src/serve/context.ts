/** What every route of `rlvr serve` shares: the engine, its tokenizer, the batcher, capture; and the running server. */
import type { FastifyInstance } from "fastify";
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

/** A running server. */
export interface Server {
  /** Base URL of the OpenAI API, e.g. "http://127.0.0.1:8000/v1". */
  url: string;
  port: number;
  host: string;
  app: FastifyInstance;
  ctx: ServeContext;
  engine: Engine;
  tokenizer: Tokenizer;
  /** Capture mode's episodes (null when off). */
  episodes: EpisodeStore | null;
  /** The policy version the server samples with (updates applied by trainServed). */
  readonly policyVersion: number;
  /** Stop listening; closes the engine when serve() opened it. */
  close(): Promise<void>;
}
