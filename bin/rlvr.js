#!/usr/bin/env node
// Entry point of the `rlvr` CLI: runs the compiled JavaScript, dist/cli/main.js, with plain node
// (`npm run build` makes it; `npm install` in a checkout runs the build).
// In a checkout (src/ beside dist/) it runs src/cli/main.ts through tsx instead when src/ changed
// after the last build, when nothing was built, or with RLVR_FROM_SOURCE=1 (the test runner sets
// it): a checkout never runs stale code. The installed package has no src/ and never loads tsx.
import { existsSync, readdirSync, statSync } from "node:fs";
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

const fromSource =
  existsSync(source) &&
  (process.env.RLVR_FROM_SOURCE === "1" || !existsSync(dist) || newest(fileURLToPath(new URL("../src", import.meta.url))) > statSync(dist).mtimeMs);

if (fromSource) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  await import(dist.href);
}
