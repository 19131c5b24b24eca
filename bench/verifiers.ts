/**
 * Math verifications per second: in-process vs through the worker-thread verifier pool.
 * Run: node --import tsx bench/verifiers.ts [--n 4000] [--sizes 1,2]
 * Prints the machine's core count, the in-process baseline measured in the same run, and for each
 * pool size its throughput and ratio to the baseline (a benchmark, not a test).
 */
import { availableParallelism, cpus } from "node:os";
import { loadMath } from "../src/rewards/math-bridge.ts";
import { createVerifierPool } from "../src/rewards/pool/pool.ts";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
};
const N = parseInt(arg("n", "4000"), 10);
const cores = availableParallelism();
const sizes = arg("sizes", [1, Math.max(1, cores - 1), cores].filter((v, i, a) => a.indexOf(v) === i).join(","))
  .split(",")
  .map(Number);

// A mix like a training batch: boxed/GSM8K/"answer is" formats, fractions, decimals, LaTeX,
// expressions (CAS path), near-misses.
const pairs: [string, string][] = [
  ["so the result is \\boxed{\\frac{1}{2}}", "0.5"],
  ["#### 1,234", "1234"],
  ["The answer is 0.05", "0.5"],
  ["\\boxed{\\dfrac{3}{4}}", "\\frac{3}{4}"],
  ["Thus $x = 3$.", "3"],
  ["\\boxed{2\\sqrt{2}}", "\\sqrt{8}"],
  ["\\boxed{(x+1)^2}", "x^2+2x+1"],
  ["<answer>25\\%</answer>", "0.25"],
  ["\\boxed{\\pi/2}", "\\frac{\\pi}{2}"],
  ["the answer is 2/1", "1/2"],
  ["\\boxed{(1, 2)}", "(2, 1)"],
  ["\\boxed{[0, 1)}", "[0,1)"],
];
const work = Array.from({ length: N }, (_, i) => pairs[i % pairs.length]!);

const math = await loadMath();
for (const [r, ref] of work.slice(0, 1000)) math.verifyMath(r, ref); // warm-up (JIT)
let t0 = performance.now();
for (const [r, ref] of work) math.verifyMath(r, ref);
const inProcMs = performance.now() - t0;
const inProc = N / (inProcMs / 1000);

const cpu = cpus()[0]?.model ?? "unknown CPU";
console.log(`cores: ${cores} (${cpu}), node ${process.version}, n = ${N} math verifications`);
console.log(`in-process:        ${inProc.toFixed(0).padStart(7)} verifications/s  (${((inProcMs * 1000) / N).toFixed(0)} µs each)`);

for (const size of sizes) {
  const pool = createVerifierPool({ size, timeoutMs: 10_000 });
  t0 = performance.now();
  await pool.ready();
  const startMs = performance.now() - t0;
  await Promise.all(work.slice(0, 1000).map(([r, ref]) => pool.run("math", [r, ref]))); // warm-up (JIT in each worker)
  t0 = performance.now();
  const outs = await Promise.all(work.map(([r, ref]) => pool.run("math", [r, ref])));
  const ms = performance.now() - t0;
  const failed = outs.filter((o) => !o.ok).length;
  const rate = N / (ms / 1000);
  console.log(
    `pool, ${size} worker${size > 1 ? "s" : " "}:   ${rate.toFixed(0).padStart(7)} verifications/s  ratio pool/in-process = ${(rate / inProc).toFixed(2)}  (start-up ${(startMs / 1000).toFixed(1)} s, failed ${failed})`,
  );
  await pool.close();
}
