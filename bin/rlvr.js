#!/usr/bin/env node
// Entry point of the `rlvr` CLI: runs the compiled JavaScript, dist/cli/main.js, with plain node
// (`npm run build` makes it; `npm install` in a checkout runs the build).
// In a checkout, RLVR_FROM_SOURCE=1 runs src/cli/main.ts through tsx instead (the test runner sets
// it, so tests always exercise the current sources); so does a checkout that was never built.
import { existsSync } from "node:fs";

const dist = new URL("../dist/cli/main.js", import.meta.url);
const source = new URL("../src/cli/main.ts", import.meta.url);
const fromSource = existsSync(source) && (process.env.RLVR_FROM_SOURCE === "1" || !existsSync(dist));
if (fromSource) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  await import(dist.href);
}
