/**
 * CAS backend comparison on the labelled case set (not a test; run by hand).
 *
 *   node --import tsx test/rewards/math/cas-compare.ts [--ce-dir DIR] [--reps N]
 *
 * Backends: mathjs (the project dependency) and, when it can be loaded, @cortex-js/compute-engine, either
 * installed in the repo or in DIR (e.g. `mkdir /tmp/ce && cd /tmp/ce && npm i @cortex-js/compute-engine`).
 * Both receive the same parsed trees through the CasBackend interface, so the comparison measures what the
 * CAS contributes: coverage (can it represent/evaluate the tree), numeric agreement, and time.
 * Prints accuracy on all cases and on the cases that reach the CAS, mean and p99 time per case, misses.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { auditMath, type MathCase } from "../../../src/rewards/math/audit.ts";
import { mathjsBackend, type CasBackend, type CompiledExpr, type Node } from "../../../src/rewards/math/index.ts";
import { verifyMath } from "../../../src/rewards/math/index.ts";

const here = new URL(".", import.meta.url).pathname;
const cases: MathCase[] = readFileSync(join(here, "../../fixtures/math/cases.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.trim().length > 0)
  .map((l) => JSON.parse(l) as MathCase);

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

// ---------------------------------------------------------------------------------------------
// compute-engine backend (loaded dynamically: it is not a dependency of the project)

type Json = number | string | { num: string } | Json[];
const CE_FN: Record<string, string> = {
  sin: "Sin", cos: "Cos", tan: "Tan", sec: "Sec", csc: "Csc", cot: "Cot", arcsin: "Arcsin", arccos: "Arccos",
  arctan: "Arctan", sinh: "Sinh", cosh: "Cosh", tanh: "Tanh", ln: "Ln", exp: "Exp", sqrt: "Sqrt", abs: "Abs",
};

function toMathJson(n: Node, vars: readonly string[], pct: boolean): Json | null {
  const r = (m: Node) => toMathJson(m, vars, pct);
  switch (n.k) {
    case "num":
      return { num: n.s.startsWith(".") ? "0" + n.s : n.s.endsWith(".") ? n.s + "0" : n.s };
    case "sym": {
      const i = vars.indexOf(n.name);
      return i < 0 ? null : `v${i}`;
    }
    case "const":
      return n.name === "pi" ? "Pi" : n.name === "e" ? "ExponentialE" : n.name === "i" ? "ImaginaryUnit" : "PositiveInfinity";
    case "neg": {
      const a = r(n.a);
      return a === null ? null : ["Negate", a];
    }
    case "pct": {
      const a = r(n.a);
      return a === null ? null : pct ? ["Divide", a, 100] : a;
    }
    case "fact": {
      const a = r(n.a);
      return a === null ? null : ["Factorial", a];
    }
    case "op": {
      const a = r(n.a);
      const b = r(n.b);
      if (a === null || b === null) return null;
      const head = { "+": "Add", "-": "Subtract", "*": "Multiply", "/": "Divide", "^": "Power" }[n.op];
      return [head, a, b];
    }
    case "fn": {
      const args = n.args.map(r);
      if (args.some((x) => x === null)) return null;
      const xs = args as Json[];
      if (n.name === "log10" || n.name === "log") return ["Log", xs[0]!, 10];
      if (n.name === "logb") return ["Log", xs[0]!, xs[1]!];
      if (n.name === "root") return ["Root", xs[0]!, xs[1]!];
      if (n.name === "binom") return ["Binomial", xs[0]!, xs[1]!];
      const f = CE_FN[n.name];
      return f ? [f, ...xs] : null;
    }
  }
}

interface CeExpr {
  subs(s: Record<string, unknown>): CeExpr;
  N(): CeExpr;
  re: number;
  im: number;
}
interface Ce {
  box(j: unknown): CeExpr;
  number(x: number): unknown;
}

async function loadComputeEngine(): Promise<{ backend: CasBackend; version: string } | null> {
  const dir = arg("--ce-dir");
  let mod: { ComputeEngine: new () => Ce; version?: string };
  let version = "?";
  try {
    if (dir) {
      const pkgDir = join(dir, "node_modules/@cortex-js/compute-engine");
      const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string; exports: Record<string, { import: string }> };
      version = pkg.version;
      mod = (await import(pathToFileURL(join(pkgDir, pkg.exports["."]!.import)).href)) as typeof mod;
    } else {
      const name = "@cortex-js/compute-engine";
      mod = (await import(name)) as typeof mod;
      version = mod.version ?? "?";
    }
  } catch (e) {
    console.log(`compute-engine not loaded (${(e as Error).message}); pass --ce-dir DIR`);
    return null;
  }
  const ce = new mod.ComputeEngine();
  const backend: CasBackend = {
    name: "compute-engine",
    compile(node, vars, pct) {
      const json = toMathJson(node, vars, pct);
      if (json === null) return null;
      let expr: CeExpr;
      try {
        expr = ce.box(json);
      } catch {
        return null;
      }
      const f: CompiledExpr = (values) => {
        try {
          const s: Record<string, unknown> = {};
          values.forEach((v, i) => (s[`v${i}`] = ce.number(v)));
          const r = (values.length ? expr.subs(s) : expr).N();
          const re = typeof r.re === "number" ? r.re : NaN;
          const im = typeof r.im === "number" ? r.im : NaN;
          return { re, im };
        } catch {
          return { re: NaN, im: NaN };
        }
      };
      return f;
    },
  };
  return { backend, version };
}

// ---------------------------------------------------------------------------------------------

/** Cases whose verdict goes through the CAS with mathjs (reason mentions cas / numeric / equations). */
function casCases(): MathCase[] {
  return cases.filter((c) => /cas probe|numeric|proportional|infinity|non-finite|cas could|rounded decimal \(.*\).*|inequality/.test(verifyMath(c.response, c.reference).reason));
}

function timeOne(c: MathCase, cas: CasBackend): number {
  const t = performance.now();
  verifyMath(c.response, c.reference, { cas });
  return performance.now() - t;
}

function report(name: string, version: string, cas: CasBackend, sub: MathCase[], reps: number): void {
  const all = auditMath(cases, { cas });
  const part = auditMath(sub, { cas });
  // warm-up, then timings (ms per case) over all cases, `reps` passes
  for (const c of cases) timeOne(c, cas);
  const times: number[] = [];
  for (let r = 0; r < reps; r++) for (const c of cases) times.push(timeOne(c, cas));
  times.sort((x, y) => x - y);
  const mean = times.reduce((s, x) => s + x, 0) / times.length;
  const p99 = times[Math.floor(times.length * 0.99)]!;
  const median = times[Math.floor(times.length / 2)]!;
  const casTimes: number[] = [];
  for (let r = 0; r < reps; r++) for (const c of sub) casTimes.push(timeOne(c, cas));
  const casMean = casTimes.reduce((s, x) => s + x, 0) / Math.max(1, casTimes.length);
  console.log(
    `| ${name} ${version} | ${(all.accuracy * 100).toFixed(2)}% (${all.n - all.falseNegatives.length - all.falsePositives.length}/${all.n}) | ` +
      `${(part.accuracy * 100).toFixed(2)}% (${part.n - part.falseNegatives.length - part.falsePositives.length}/${part.n}) | ` +
      `${(median * 1000).toFixed(0)} µs | ${(mean * 1000).toFixed(0)} µs | ${(p99 * 1000).toFixed(0)} µs | ${(times[times.length - 1]! * 1000).toFixed(0)} µs | ${(casMean * 1000).toFixed(0)} µs |`,
  );
  const slow = cases.map((c) => ({ c, t: timeOne(c, cas) })).sort((x, y) => y.t - x.t).slice(0, 3);
  for (const { c, t } of slow) console.log(`    slowest (${name}): ${t.toFixed(1)} ms  ${JSON.stringify(c.response).slice(0, 70)} vs ${JSON.stringify(c.reference).slice(0, 40)}`);
  for (const m of [...all.falseNegatives, ...all.falsePositives])
    console.log(`    miss (${name}): [${m.category}] ${JSON.stringify(m.verdict.normalizedAnswer)} vs ${JSON.stringify(m.verdict.normalizedReference)} → ${m.verdict.reason}`);
}

const reps = Number(arg("--reps") ?? "3");
const sub = casCases();
console.log(`${cases.length} cases, ${sub.length} decided through the CAS (with mathjs)`);
console.log("| backend | accuracy (all) | accuracy (CAS cases) | median / case | mean / case | p99 / case | max / case | mean / CAS case |");
console.log("|---|---|---|---|---|---|---|---|");
const mj = JSON.parse(readFileSync(join(here, "../../../node_modules/mathjs/package.json"), "utf8")) as { version: string };
report("mathjs", mj.version, mathjsBackend, sub, reps);
const ce = await loadComputeEngine();
if (ce) report("compute-engine", ce.version, ce.backend, sub, reps);
