/**
 * Parser + CAS comparison on the labelled suites (not a test; run by hand, issue 26):
 *
 *   node --import tsx test/rewards/math/parser-compare.ts --ce-dir /tmp/ce [--suite NAME ...]
 *
 * Three deciders share the extraction (extractAnswer / extractReference) and differ in what comes after it:
 *   ours    — normalize.ts + parse.ts + equivalence.ts (exact rationals, mathjs for floats and probes): verifyMath;
 *   ce      — @cortex-js/compute-engine parses both answers (LaTeX → MathJSON) and decides with `isEqual`, after a fast
 *             path that compares plain numbers exactly;
 *   ce+norm — the same, on the answers after our normalisation (units, words after numbers, \text, thousands).
 * compute-engine is loaded from DIR (`mkdir /tmp/ce && cd /tmp/ce && npm i @cortex-js/compute-engine`); it is not a
 * dependency of the project. Prints agreement, false positives and time per call (median, p99, max) per suite.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { MathCase } from "../../../src/rewards/math/audit.ts";
import { extractAnswer, extractReference, normalizeAnswer, verifyMath } from "../../../src/rewards/math/index.ts";

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const here = new URL(".", import.meta.url).pathname;
const SUITES = ["cases", "conventions", "handwritten", "peer-mathverify", "failclosed"];
const load = (name: string): MathCase[] =>
  readFileSync(join(here, `../../fixtures/math/${name}.jsonl`), "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as MathCase);

interface Boxed {
  json: unknown;
  isEqual(o: Boxed): boolean | undefined;
}
interface Engine {
  parse(s: string): Boxed;
  timeLimit?: number;
}

const PLAIN = /^-?\d+(?:\.\d+)?$/;

function ceDecider(ce: Engine, normalise: boolean) {
  return (c: MathCase): boolean => {
    const got = extractAnswer(c.response);
    const ref = extractReference(c.reference);
    if (!got || !ref) return false;
    const a = normalise ? normalizeAnswer(got.answer, true) : got.answer;
    const b = normalise ? normalizeAnswer(ref.answer, true) : ref.answer;
    if (PLAIN.test(a) && PLAIN.test(b)) return Number(a) === Number(b) && a.replace(/\.0+$/, "") === b.replace(/\.0+$/, "");
    try {
      return ce.parse(a).isEqual(ce.parse(b)) === true;
    } catch {
      return false;
    }
  };
}

function run(name: string, cases: MathCase[], decide: (c: MathCase) => boolean): void {
  const times: number[] = [];
  let agree = 0;
  let fp = 0;
  for (const c of cases) {
    const t0 = performance.now();
    const v = decide(c);
    times.push((performance.now() - t0) * 1000);
    if (v === c.equivalent) agree++;
    else if (v) fp++;
  }
  times.sort((x, y) => x - y);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!.toFixed(0);
  console.log(`${name.padEnd(26)} ${((100 * agree) / cases.length).toFixed(2).padStart(6)}% agree (${agree}/${cases.length}), ${String(fp).padStart(3)} FP, median ${q(0.5)} µs, p99 ${q(0.99)} µs, max ${q(1 - 1e-9)} µs`);
}

const dir = arg("--ce-dir");
let ce: Engine | null = null;
if (dir) {
  const mod = (await import(pathToFileURL(join(dir, "node_modules/@cortex-js/compute-engine/dist/esm-min/compute-engine.js")).href)) as { ComputeEngine: new () => Engine };
  ce = new mod.ComputeEngine();
  ce.timeLimit = 500;
}
const chosen = process.argv.includes("--suite") ? process.argv.filter((_, i) => process.argv[i - 1] === "--suite") : SUITES;
for (const s of chosen) {
  const cases = load(s);
  // warm-up pass, then the measured pass
  for (const c of cases.slice(0, 50)) verifyMath(c.response, c.reference);
  run(`${s} / ours`, cases, (c) => verifyMath(c.response, c.reference).correct);
  if (ce) {
    run(`${s} / ce`, cases, ceDecider(ce, false));
    run(`${s} / ce+norm`, cases, ceDecider(ce, true));
  }
}
