/**
 * User reward functions from a module: `reward: {module: ./my-reward.ts, export: score}`.
 *
 * The module exports a function `(response, example, {step, options}) → number | boolean |
 * {reward, correct?, extracted?, reason?, …} | null` (sync or async; null skips the sample), or a
 * Verifier object (`{verify}`) / a value made by `defineReward`. It is imported once per thread —
 * in the main process, or in each pool worker when rl.verifierPool is on (the worker imports it by
 * file URL, so the pool can stop a function that hangs).
 */
import { isAbsolute, resolve } from "node:path";
import type { ZodType } from "zod";
import { pathToFileURL } from "node:url";
import type { Example } from "../core/example.ts";
import { toVerdict, type Verifier, type VerifyContext } from "./registry.ts";
import { ensureTypeScriptLoader } from "../util/ts-loader.ts";
import type { Verdict } from "./types.ts";

/** Options of the built-in `module` verifier (what `{module, export}` compiles to). */
export interface ModuleOptions {
  /** Import specifier: a file URL (what the compiler makes of a path) or a package name. */
  module: string;
  /** Export name (default "default"). */
  export?: string;
  /** Passed to the function as ctx.options. */
  options?: unknown;
}

/**
 * The import specifier of a module path: file URLs and package names as they are; paths (absolute,
 * or relative — to `base`, the config file's folder when known, else the working directory) as
 * file URLs.
 */
export function moduleSpecifierOf(path: string, base = process.cwd()): string {
  if (/^[a-z][a-z0-9+.-]+:/i.test(path)) return path;
  if (isAbsolute(path) || path.startsWith("./") || path.startsWith("../") || /\.[cm]?[jt]s$/.test(path)) return pathToFileURL(resolve(base, path)).href;
  return path;
}

type Loaded = (response: string, example: Example, ctx: VerifyContext) => unknown;
const cache = new Map<string, Promise<Loaded>>();
/** Exports already loaded, so that a synchronous function is called synchronously. */
const ready = new Map<string, Loaded>();
/** The example schemas of loaded exports that declare one (a Verifier's, or a function's `exampleSchema` property). */
const schemas = new Map<string, ZodType>();

/**
 * The example schema a loaded reward export declares (`exampleSchema` on a Verifier object, a
 * `defineReward` value or the function itself), or undefined (none, or not loaded yet).
 */
export function rewardExportSchema(spec: string, name = "default"): ZodType | undefined {
  return schemas.get(`${spec}#${name}`);
}

/**
 * Import `spec` once and return its export `name` as a function of (response, example, ctx).
 * @throws Error naming the module and export when the import fails or the export is not a
 *   function / Verifier (listing the module's exports)
 */
export function loadRewardExport(spec: string, name = "default"): Promise<Loaded> {
  const key = `${spec}#${name}`;
  let p = cache.get(key);
  if (!p) {
    p = ensureTypeScriptLoader(spec).then(() => import(spec)).then(
      (m: Record<string, unknown>) => {
        const x = m[name];
        const schema = (x as { exampleSchema?: ZodType } | undefined)?.exampleSchema;
        if (schema && typeof (schema as ZodType).safeParse === "function") schemas.set(key, schema);
        if (typeof x === "function") {
          ready.set(key, x as Loaded);
          return x as Loaded;
        }
        if (x && typeof x === "object" && typeof (x as Verifier).verify === "function") {
          const v = x as Verifier;
          const f: Loaded = (r, e, c) => v.verify(r, e, c);
          ready.set(key, f);
          return f;
        }
        const names = Object.keys(m).filter((k) => typeof m[k] === "function" || typeof (m[k] as Verifier | undefined)?.verify === "function");
        throw new Error(`reward module ${spec} has no function export "${name}" (function exports: ${names.join(", ") || "none"}); set export: to one of them`);
      },
      (e: unknown) => {
        throw new Error(`cannot load reward module ${spec}: ${((e as Error).message ?? String(e)).split("\n")[0]}`);
      },
    );
    p.catch(() => cache.delete(key));
    cache.set(key, p);
  }
  return p;
}

/**
 * The built-in `module` verifier: calls the user function named by ctx.options ({module, export,
 * options}) and turns its value into a Verdict (see toVerdict; null → reward NaN = skipped).
 * @throws Error (on the promise) for a bad module/export or a value of the wrong shape
 */
export const moduleVerifier: Verifier = {
  name: "module",
  description: "a user reward function from a module",
  // Synchronous when the module is loaded and the function is (held-out evaluation and the guided
  // methods then score in line); a promise otherwise.
  verify: (response: string, example: Example, ctx: VerifyContext = {}): Verdict | Promise<Verdict> => {
    const o = (ctx.options ?? {}) as Partial<ModuleOptions>;
    if (typeof o.module !== "string") throw new Error('the "module" verifier needs options {module, export}');
    const who = `${o.module.split("/").pop()}#${o.export ?? "default"}`;
    const call = (fn: Loaded): Verdict | Promise<Verdict> => {
      const value = fn(response, example, { step: ctx.step, options: o.options });
      const at = ctx.correctAt ?? 1;
      return isThenable(value) ? Promise.resolve(value).then((v) => toVerdict(v, who, at)) : toVerdict(value, who, at);
    };
    const fn = ready.get(`${o.module}#${o.export ?? "default"}`);
    return fn ? call(fn) : loadRewardExport(o.module, o.export).then(call);
  },
};

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return !!v && (typeof v === "object" || typeof v === "function") && typeof (v as PromiseLike<unknown>).then === "function";
}
