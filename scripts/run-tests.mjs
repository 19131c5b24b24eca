#!/usr/bin/env node
// Runs the test suite with Node's built-in test runner and tsx as the TypeScript loader.
// Usage: node scripts/run-tests.mjs [--slow] [files or folders...]
//   default: every *.test.ts under test/ except the slow ones (`npm test`, a few minutes);
//   --slow:  only the slow learning tests — files named *.slow.test.ts or under test/slow/
//            (`npm run test:slow`; CI runs both). Files named explicitly always run.
//   test/scale (torchrun, vLLM) runs only when named: `npm run test:scale`; so does test/real (the
//   real SmolLM2-135M-Instruct after `rlvr setup model smollm2-135m-instruct`): `npm run test:real`.
//   test/tinker (the official tinker SDK in .venv-tinker against `rlvr tinker`) likewise: `npm run test:tinker`.
// The CLI that tests spawn (bin/rlvr.js) runs the current sources (RLVR_FROM_SOURCE=1), not dist/.
import { readdirSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { spawnSync } from "node:child_process";

const args = process.argv.slice(2);
const slow = args.includes("--slow");
const named = args.filter((a) => a !== "--slow");

/** Whether a test file belongs to the slow suite. */
const isSlow = (p) => p.endsWith(".slow.test.ts") || p.split(sep).includes("slow");
/** Scale-out tests (test/scale: torchrun, vLLM; minutes each) run only when named (`npm run test:scale`). */
const isScale = (p) => p.split(sep).includes("scale") || p.split(sep).includes("tinker");
/** Real-model tests (test/real: an imported pretrained model, minutes) run only when named (`npm run test:real`). */
const isReal = (p) => p.split(sep).includes("real");

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const e of readdirSync(path).sort()) collect(join(path, e), out);
  } else if (path.endsWith(".test.ts")) out.push(path);
  return out;
}
const explicitFiles = named.filter((p) => !statSync(p).isDirectory());
const roots = named.length ? named : ["test"];
const files = roots.flatMap((r) => collect(r, [])).filter((f) => explicitFiles.includes(f) || (isSlow(f) === slow && (named.length > 0 || (!isScale(f) && !isReal(f)))));
if (files.length === 0) {
  console.error(`no ${slow ? "slow " : ""}test files found under ${roots.join(", ")}`);
  process.exit(1);
}
const r = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", ...files], {
  stdio: "inherit",
  // RLVR_ENGINE_PROBE=off: `rlvr train` in CLI tests does not probe the torch engine (seconds per model shape); test/engines/auto.test.ts sets it per test.
  env: { ...process.env, RLVR_FROM_SOURCE: "1", RLVR_ENGINE_PROBE: process.env.RLVR_ENGINE_PROBE ?? "off" },
});
process.exit(r.status ?? 1);
