/**
 * openEngine: the one place an engine is built from a `model:` config block — a checkpoint
 * (`path`) or a random initialisation (`init`), on the embedded engine (in-process) or the torch
 * engine (Python worker). The trainer, `rlvr eval`, `rlvr serve` and methods that load a second
 * model (ReLIFT's teacher) all open engines through it. `engine: auto` is resolved here (probe.ts:
 * torch when it is set up and measured faster on this model, embedded otherwise, the reason in one
 * line), so the rest of the code only ever sees a concrete engine.
 */
import { existsSync } from "node:fs";
import type { Engine } from "../core/engine.ts";
import { missingModel, openEngineOfKind, type EngineKindOptions, type ModelSpec } from "./open-kind.ts";
import type { ProbeResult, ProbeShape } from "./probe.ts";

/** What every engine needs besides the model block, and how `engine: auto` decides. */
export interface OpenEngineOptions extends EngineKindOptions {
  /** engine: auto — the batch of one probe step (default: probe.ts DEFAULT_PROBE_SHAPE; runs pass their RL step's, probeShapeOf). */
  probeShape?: ProbeShape;
  /** engine: auto — decide on this measurement instead of probing (tests). */
  engineProbe?: () => Promise<ProbeResult>;
  /** engine: auto — receives the one line saying which engine was picked and why (default: stderr). */
  log?: (line: string) => void;
}

/**
 * Open an engine for `model`.
 * @throws Error "config error at model.path: …" when the checkpoint directory is missing, or
 *         "config error at model.init.…" when the init block has a wrong or unknown field or an
 *         inconsistent shape (heads not dividing hidden).
 */
export async function openEngine(model: ModelSpec, o: OpenEngineOptions): Promise<Engine> {
  if (o.files) return openEngineOfKind(model, o); // files in memory: the embedded engine, or its error
  if (model.engine === "auto") return openAuto(model, o);
  if (model.engine === "tinker") {
    const open = remoteOpeners.get("tinker");
    if (!open) throw new Error("engine: tinker needs rlvr's Tinker client engine loaded: import \"rlvr/tinker\" (the CLI and rlvr's train() load it)");
    return open(model, o);
  }
  return openEngineOfKind(model, o);
}

/** Openers of engine kinds that live above this layer (src/tinker/engine.ts registers "tinker"). */
const remoteOpeners = new Map<string, (model: ModelSpec, o: OpenEngineOptions) => Promise<Engine>>();

/** Register how `model.engine: <kind>` opens (a client of a remote trainer, e.g. the Tinker API). */
export function registerEngineKind(kind: "tinker", open: (model: ModelSpec, o: OpenEngineOptions) => Promise<Engine>): void {
  remoteOpeners.set(kind, open);
}

/**
 * `engine: auto`: chooseEngine (probe.ts) picks the engine and says why in one line; when the torch
 * engine was picked but does not start (a cached probe, a Python broken since), the embedded one
 * opens instead, with the reason.
 */
async function openAuto(model: ModelSpec, o: OpenEngineOptions): Promise<Engine> {
  const log = o.log ?? ((line: string) => process.stderr.write(line + "\n"));
  const { chooseEngine } = await import("./probe.ts");
  if (model.path && !existsSync(model.path)) throw new Error(missingModel(model.path));
  const choice = await chooseEngine(model, { tokenizer: o.tokenizer, seed: o.seed, shape: o.probeShape, probe: o.engineProbe });
  log(choice.reason);
  if (choice.engine === "embedded") return openEngine({ ...model, engine: "embedded" }, o);
  try {
    return await openEngine({ ...model, engine: "torch" }, o);
  } catch (e) {
    log(`engine: auto → embedded after all (the torch engine did not start: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]})`);
    return openEngine({ ...model, engine: "embedded" }, o);
  }
}
