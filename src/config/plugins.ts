/**
 * Config plugins: `plugins: [./my-task.ts, ./my-loss.mjs, some-package]` in a run config names
 * modules that register things with the public API (defineTask, registerVerifier/defineReward,
 * registerAdvantage, registerPolicyLoss, defineMethod) when imported. They are imported before the
 * config is validated, so the config can name what they register (data.task, rl.algorithm, …).
 *
 * Paths are relative to the config file's folder (or the working directory for a config object);
 * package names are imported as they are. `.js`/`.mjs` modules load with plain Node. `.ts` modules
 * need the TypeScript loader tsx (`npm install tsx`; the package lists it as an optional peer) and
 * load as ES modules when named `.mts` or inside a package with `"type": "module"` (tsx treats
 * other `.ts` files as CommonJS, which cannot import rlvr):
 * when rlvr runs compiled, tsx is registered on the first `.ts` plugin; when rlvr itself runs from
 * sources through tsx, they load as they are.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { ConfigError, loadRunConfig, type RunConfig } from "./schema.ts";
import { ensureTypeScriptLoader } from "../util/ts-loader.ts";

const TS_FILE = /\.(c|m)?tsx?$/;
const CJS_ERRORS = new Set(["ERR_REQUIRE_ESM", "ERR_PACKAGE_PATH_NOT_EXPORTED", "ERR_REQUIRE_ASYNC_MODULE"]);

/** Whether a plugin entry is a path (absolute, or relative `./`, `../`) rather than a package name. */
function isPath(spec: string): boolean {
  return isAbsolute(spec) || spec.startsWith("./") || spec.startsWith("../") || spec === "." || spec === "..";
}

/**
 * The form of `spec` to write into a resolved config: paths made absolute (so that the run
 * directory's config.yaml, used by --resume, names the same files), package names as they are.
 */
export function resolvePluginPath(spec: string, baseDir: string): string {
  return isPath(spec) ? resolve(baseDir, spec) : spec;
}

/** Whether the nearest package.json above `file` says `"type": "module"` (how Node and tsx decide a .ts/.js file's module kind). */
function inModulePackage(file: string): boolean {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pj = join(dir, "package.json");
    if (existsSync(pj)) {
      try {
        return (JSON.parse(readFileSync(pj, "utf8")) as { type?: unknown }).type === "module";
      } catch {
        return false;
      }
    }
    if (dirname(dir) === dir) return false;
  }
}

/**
 * Import each plugin module once, in order (ES modules are cached: importing again is a no-op).
 * @param specs the config's `plugins` entries
 * @param baseDir folder that relative paths start from
 * @param where the config's name in error messages (a file path, or "config")
 * @throws ConfigError `config error in <where> at plugins[i]: …` for a missing file, a .ts plugin
 *   without tsx, or a module that throws or fails to parse while loading (its first line)
 */
export async function loadPlugins(specs: readonly string[], baseDir: string, where = "config"): Promise<void> {
  for (const [i, spec] of specs.entries()) {
    const at = where === "--plugin" ? `error: --plugin ${spec}` : `config error in ${where} at plugins[${i}]`;
    if (typeof spec !== "string" || spec.length === 0) throw new ConfigError(`${at}: expected a module path or package name, got ${JSON.stringify(spec)}`);
    let target = spec;
    if (isPath(spec)) {
      const file = resolve(baseDir, spec);
      if (!existsSync(file)) throw new ConfigError(`${at}: ${file} does not exist (paths are relative to ${baseDir})`);
      target = pathToFileURL(file).href;
    }
    if (TS_FILE.test(spec)) {
      if (isPath(spec) && !/\.mts$/.test(spec) && !inModulePackage(resolve(baseDir, spec))) {
        // tsx would load it as CommonJS: a second copy of rlvr's registries, which the run never sees.
        throw new ConfigError(`${at}: ${spec} would load as CommonJS (no "type": "module" in the package.json above it); rename it .mts or set "type": "module"`);
      }
      try {
        await ensureTypeScriptLoader(spec);
      } catch (e) {
        throw new ConfigError(`${at}: ${(e as Error).message}`);
      }
    }
    try {
      await import(target);
    } catch (e) {
      const msg = e instanceof Error ? e.message.split("\n")[0] : String(e);
      const code = (e as { code?: string }).code ?? "";
      // tsx loads a .ts file as CommonJS unless its package.json says "type": "module"; rlvr is ESM only.
      const hint = /\.tsx?$/.test(spec) && CJS_ERRORS.has(code) ? ` (a .ts plugin outside an ES-module package loads as CommonJS: rename it .mts or set "type": "module" in its package.json)` : "";
      throw new ConfigError(`${at}: cannot load ${spec}: ${msg}${hint}`);
    }
  }
}

/**
 * Read a YAML run config, import its plugins, then validate it (so the config may name what the
 * plugins registered). The returned config's `plugins` are absolute paths.
 * @throws ConfigError naming the file and field (see loadRunConfig and loadPlugins)
 */
export async function loadRunConfigFile(path: string): Promise<RunConfig> {
  let plugins: unknown = undefined;
  try {
    plugins = (parseYaml(readFileSync(path, "utf8")) as { plugins?: unknown } | null)?.plugins;
  } catch {
    // unreadable or invalid YAML: loadRunConfig reports it with the file and line
  }
  const baseDir = dirname(resolve(path));
  if (plugins !== undefined && !Array.isArray(plugins)) throw new ConfigError(`config error in ${path} at plugins: expected a list of module paths, got ${JSON.stringify(plugins)}`);
  if (Array.isArray(plugins)) await loadPlugins(plugins as string[], baseDir, path);
  const cfg = loadRunConfig(path);
  return withResolvedPlugins(cfg, baseDir);
}

/** `cfg` with its plugin paths made absolute against `baseDir`. */
export function withResolvedPlugins(cfg: RunConfig, baseDir: string): RunConfig {
  const list = (cfg as { plugins?: string[] }).plugins;
  if (!list?.length) return cfg;
  return { ...cfg, plugins: list.map((p) => resolvePluginPath(p, baseDir)) } as RunConfig;
}

/**
 * The run config (`config.yaml`) of a run directory, or of a checkpoint inside one
 * (`<run>/checkpoints/<name>`); null when there is none.
 */
export function runConfigPath(path: string): string | null {
  const abs = resolve(path);
  return [join(abs, "config.yaml"), join(abs, "..", "config.yaml"), join(abs, "..", "..", "config.yaml")].find((c) => existsSync(c)) ?? null;
}

/**
 * Import what a command needs before it resolves a name (a task, a verifier or reward, a loss):
 * the `plugins` of the run config that `runPath` belongs to (a run directory or a checkpoint in
 * one; absolute in a run's config.yaml, else relative to its folder), then each `extra` module
 * (`--plugin <file>`: paths relative to the working directory, or package names). Every command
 * that resolves names calls this: train, eval, data gen, verify, verify-audit, serve.
 * @returns the run config's path, or null when `runPath` is absent or has none
 * @throws ConfigError naming the config (or "--plugin") and the entry, as loadPlugins
 */
export async function loadCommandPlugins(extra: readonly string[] = [], runPath?: string): Promise<string | null> {
  const cfgPath = runPath === undefined ? null : runConfigPath(runPath);
  if (cfgPath) {
    let plugins: unknown;
    try {
      plugins = (parseYaml(readFileSync(cfgPath, "utf8")) as { plugins?: unknown } | null)?.plugins;
    } catch {
      plugins = undefined; // an unreadable config is reported by whoever loads it
    }
    if (Array.isArray(plugins)) await loadPlugins(plugins as string[], dirname(cfgPath), cfgPath);
  }
  await loadPlugins(extra, process.cwd(), "--plugin");
  return cfgPath;
}
