#!/usr/bin/env node
// Entry point of the `rlvr` CLI: runs the compiled JavaScript, dist/cli/main.js, with plain node
// (`npm run build` makes it; `npm install` in a checkout runs the build).
// In a checkout (src/ beside dist/) it runs src/cli/main.ts through tsx instead when src/ changed
// after the last build, when nothing was built, or with RLVR_FROM_SOURCE=1 (the test runner sets
// it): a checkout never runs stale code. The installed package has no src/ and never loads tsx.
// Config plugins that import "rlvr" (or rlvr/<subpath>) get this CLI's own modules, wherever the
// plugin lives: one copy of the registries they register into.
import { existsSync, readdirSync, statSync } from "node:fs";
import { register as registerHooks } from "node:module";
import { fileURLToPath } from "node:url";

const dist = new URL("../dist/cli/main.js", import.meta.url);
const source = new URL("../src/cli/main.ts", import.meta.url);

/** Newest modification time (ms) of the files under `dir`. */
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** Resolve "rlvr" and its subpaths to this CLI's files (`root`: "src" or "dist"; `ext`: ".ts" or ".js"). */
function mapPackageName(root, ext) {
  const at = (p) => new URL(`../${root}/${p}${ext}`, import.meta.url).href;
  const map = { rlvr: at("index") };
  for (const sub of ["algorithms", "rewards", "engines", "tasks", "math"]) map[`rlvr/${sub}`] = at(`api/${sub}`);
  const hooks = `const map = ${JSON.stringify(map)};
export async function resolve(specifier, context, next) {
  return next(Object.hasOwn(map, specifier) ? map[specifier] : specifier, context);
}`;
  registerHooks(`data:text/javascript,${encodeURIComponent(hooks)}`);
}

const fromSource =
  existsSync(source) &&
  (process.env.RLVR_FROM_SOURCE === "1" || !existsSync(dist) || newest(fileURLToPath(new URL("../src", import.meta.url))) > statSync(dist).mtimeMs);

if (fromSource) {
  const { register } = await import("tsx/esm/api");
  register();
  mapPackageName("src", ".ts");
  await import(source.href);
} else {
  mapPackageName("dist", ".js");
  await import(dist.href);
}
