/**
 * Paths inside a run config resolve against the config file's folder, not the working directory,
 * so `rlvr train configs/gsm8k.yaml` finds `train: data/train.jsonl` next to the config wherever
 * it is started from. `out` is the exception: a run directory is where the user runs rlvr
 * (`out: runs/x` from the repository root).
 */
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { MODEL_CATALOG, defaultModelDir } from "../engines/catalog.ts";

/** Input paths of a run config (dotted; `[]` = each entry of a list). */
export const CONFIG_PATH_FIELDS = ["data.train", "data.test", "model.path", "tokenizer.path", "rl.verifierPool.modules[]", "reward.module", "plugins[]"] as const; // and reward.components[].module (below)

/** A relative file path (not a URL, not a bare package name where modules are meant). */
function relativePath(v: string, moduleField: boolean): boolean {
  if (v === "" || isAbsolute(v) || /^[a-z][a-z0-9+.-]+:/i.test(v)) return false;
  if (moduleField) return v.startsWith("./") || v.startsWith("../") || /\.(?:[cm]?[jt]s|tsx?)$/.test(v);
  return true;
}

/**
 * Whether a model or tokenizer path names a catalogue model (`model.path: smollm2-135m-instruct`,
 * set up by `rlvr setup model <name>`) rather than a folder: the name is known and no folder of
 * that name sits beside the config.
 */
function catalogName(v: string, baseDir: string): boolean {
  return Object.hasOwn(MODEL_CATALOG, v) && !existsSync(resolve(baseDir, v));
}

/**
 * A copy of the raw (unvalidated) config with every relative path in CONFIG_PATH_FIELDS made
 * absolute against `baseDir`. Module fields (`…modules[]`, `reward.module`, `plugins[]`) resolve
 * only entries that look like files (`./x`, `../x`, `x.ts`), so package names stay as they are.
 * `model.path` / `tokenizer.path` naming a catalogue model resolve to where `rlvr setup model`
 * puts it (src/engines/catalog.ts). Values of the wrong type are left for the schema to report.
 */
export function resolveConfigPaths(raw: unknown, baseDir: string): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const out = structuredClone(raw) as Record<string, unknown>;
  for (const field of CONFIG_PATH_FIELDS) {
    const list = field.endsWith("[]");
    const parts = field.replace(/\[\]$/, "").split(".");
    const moduleField = list || field === "reward.module";
    let obj: unknown = out;
    for (const p of parts.slice(0, -1)) obj = obj && typeof obj === "object" && !Array.isArray(obj) ? (obj as Record<string, unknown>)[p] : undefined;
    if (!obj || typeof obj !== "object" || Array.isArray(obj)) continue;
    const o = obj as Record<string, unknown>;
    const key = parts[parts.length - 1]!;
    const fix = (v: unknown) => {
      if (typeof v !== "string") return v;
      if ((field === "model.path" || field === "tokenizer.path") && catalogName(v, baseDir)) return defaultModelDir(v);
      return relativePath(v, moduleField) ? resolve(baseDir, v) : v;
    };
    if (list) {
      if (Array.isArray(o[key])) o[key] = (o[key] as unknown[]).map(fix);
    } else if (key in o) o[key] = fix(o[key]);
  }
  // reward.components[].module: user reward modules of a composed reward (src/rewards/config.ts).
  const comps = (out.reward as { components?: unknown } | undefined)?.components;
  if (Array.isArray(comps)) for (const c of comps) if (c && typeof c === "object" && typeof (c as { module?: unknown }).module === "string" && relativePath((c as { module: string }).module, true)) (c as { module: string }).module = resolve(baseDir, (c as { module: string }).module);
  return out;
}
