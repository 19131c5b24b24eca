#!/usr/bin/env node
// `npm run build` (also run by `npm install` in a checkout, through `prepare`, and by `npm pack`):
//   1. tsc -p tsconfig.build.json: src/**/*.ts → dist/**/*.js + .d.ts (ESM; ".ts" imports
//      rewritten to ".js"), after emptying dist/;
//   2. copies the plain-JavaScript files of src/ (the verifier pool's worker-boot.mjs) beside them;
//   3. builds the dashboard page into dashboard/dist and the training page (`rlvr play`) into
//      dashboard/train/dist with Vite, so the package serves them without Vite.
// Exits 1, after printing tsc's errors, when the sources do not typecheck (dist/ is still emitted);
// with --lenient (the `prepare` script, so that `npm install` never fails on a type error) it warns.
import { cpSync, existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");
const dist = join(root, "dist");
const t0 = performance.now();
const lenient = process.argv.includes("--lenient");

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const r = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], { stdio: "inherit" });
const typeErrors = r.status !== 0;

function copyPlainJs(dir) {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) copyPlainJs(p);
    else if (/\.(mjs|cjs|js)$/.test(e)) cpSync(p, join(dist, relative(src, p)));
  }
}
copyPlainJs(src);

let page = "dashboard page: skipped (Vite is not installed)";
if (existsSync(join(root, "node_modules", "vite"))) {
  const { ensureDashboardBuilt } = await import(pathToFileURL(join(dist, "dashboard", "build.js")).href);
  page = `dashboard page: ${relative(root, await ensureDashboardBuilt())}`;
  const { ensurePlayPageBuilt } = await import(pathToFileURL(join(dist, "browser", "build.js")).href);
  page += `; training page: ${relative(root, await ensurePlayPageBuilt())}`;
}
console.error(`build: dist/ in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${page}`);
if (typeErrors) {
  console.error("build: tsc reported type errors (above); dist/ was emitted" + (lenient ? " (run npm run build to fail on them)" : "; the build failed"));
  process.exit(lenient ? 0 : 1);
}
