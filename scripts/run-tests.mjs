#!/usr/bin/env node
// Runs the test suite with Node's built-in test runner and tsx as the TypeScript loader.
// Usage: node scripts/run-tests.mjs [files or folders...]   (default: every *.test.ts under test/)
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const e of readdirSync(path).sort()) collect(join(path, e), out);
  } else if (path.endsWith(".test.ts")) out.push(path);
  return out;
}
const roots = process.argv.slice(2).length ? process.argv.slice(2) : ["test"];
const files = roots.flatMap((r) => collect(r, []));
if (files.length === 0) {
  console.error("no test files found under " + roots.join(", "));
  process.exit(1);
}
const r = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", ...files], { stdio: "inherit" });
process.exit(r.status ?? 1);
