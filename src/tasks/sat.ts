/**
 * Random 3-SAT: find a truth assignment that satisfies every clause. Difficulty = number of
 * variables n (3..30); the number of clauses is round(ratio · n) with `ratio` an option (default
 * 4.0, just under the 3-SAT phase transition near 4.27, where random instances are hardest).
 *
 * Generation: each clause picks 3 distinct variables with random signs; the formula is kept only
 * if a DPLL solver finds it satisfiable (no planted solution, so satisfiable instances are
 * sampled without bias); the solver's model is the stored solution.
 *
 * Answer format: DIMACS-style literals `<answer>1 -2 3</answer>` (k = x_k true, -k = false), or
 * `x1=1 x2=0`, `x1=true`, `not x2`, `¬x2`. The verifier accepts ANY assignment that satisfies all
 * clauses; variables left out may take any value only if every clause is already satisfied.
 */
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";
import type { Rng } from "./rng.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";
import { answerRegion, fail, pass } from "./answer.ts";

/** A CNF formula: clauses of non-zero literals (k = x_k, -k = ¬x_k), variables 1..n. */
export type Cnf = number[][];

/**
 * Solve a CNF with DPLL (unit propagation + branching on the most frequent variable).
 * @returns an assignment (index 1..n; index 0 unused) or null when unsatisfiable.
 */
export function solveSat(cnf: Cnf, n: number): boolean[] | null {
  const assign: (boolean | null)[] = new Array(n + 1).fill(null);
  const value = (lit: number): boolean | null => {
    const v = assign[Math.abs(lit)]!;
    return v === null ? null : lit > 0 ? v : !v;
  };
  const trail: number[] = [];
  const propagate = (): boolean => {
    for (let changed = true; changed; ) {
      changed = false;
      for (const clause of cnf) {
        let unassigned = 0;
        let last = 0;
        let sat = false;
        for (const lit of clause) {
          const v = value(lit);
          if (v === true) {
            sat = true;
            break;
          }
          if (v === null) {
            unassigned++;
            last = lit;
          }
        }
        if (sat) continue;
        if (unassigned === 0) return false;
        if (unassigned === 1) {
          assign[Math.abs(last)] = last > 0;
          trail.push(Math.abs(last));
          changed = true;
        }
      }
    }
    return true;
  };
  const search = (): boolean => {
    const mark = trail.length;
    if (!propagate()) {
      while (trail.length > mark) assign[trail.pop()!] = null;
      return false;
    }
    const counts = new Array(n + 1).fill(0);
    for (const clause of cnf) {
      if (clause.some((l) => value(l) === true)) continue;
      for (const l of clause) if (value(l) === null) counts[Math.abs(l)]++;
    }
    let best = 0;
    for (let v = 1; v <= n; v++) if (assign[v] === null && counts[v] > (best === 0 ? 0 : counts[best])) best = v;
    if (best === 0) {
      for (let v = 1; v <= n; v++) if (assign[v] === null) assign[v] = false;
      return true;
    }
    for (const choice of [true, false]) {
      assign[best] = choice;
      trail.push(best);
      const m2 = trail.length;
      if (search()) return true;
      while (trail.length > m2) assign[trail.pop()!] = null;
      trail.pop();
      assign[best] = null;
    }
    while (trail.length > mark) assign[trail.pop()!] = null;
    return false;
  };
  return search() ? assign.map((v) => v === true) : null;
}

/** Whether every clause has a literal made true by `assign` (index 1..n; missing = unknown). */
export function satisfies(cnf: Cnf, assign: Map<number, boolean>): boolean {
  return cnf.every((c) => c.some((l) => assign.get(Math.abs(l)) === l > 0));
}

/**
 * Parse an assignment from text (DIMACS literals or x-named forms; see the module doc).
 * @returns the assignment, or an error string (conflicting or out-of-range variables).
 */
export function parseAssignment(text: string, n: number): Map<number, boolean> | string {
  const out = new Map<number, boolean>();
  const set = (v: number, val: boolean): string | null => {
    if (v < 1 || v > n) return `variable ${v} is out of range 1..${n}`;
    if (out.has(v) && out.get(v) !== val) return `x${v} is set both true and false`;
    out.set(v, val);
    return null;
  };
  if (/x\d/i.test(text)) {
    const re = /(¬|~|!|-|\bnot\s+)?\s*x(\d+)(?:\s*(?:=|:|is)\s*(true|false|t|f|1|0)\b)?/gi;
    for (const m of text.matchAll(re)) {
      let val = m[3] === undefined ? true : /^(true|t|1)$/i.test(m[3]);
      if (m[1]) val = !val;
      const err = set(Number(m[2]), val);
      if (err) return err;
    }
  } else {
    for (const m of text.matchAll(/-?\d+/g)) {
      const k = Number(m[0]);
      if (k === 0) continue; // DIMACS terminator
      const err = set(Math.abs(k), k > 0);
      if (err) return err;
    }
  }
  return out;
}

/** SAT instance data kept in `Example.meta`. */
export interface SatMeta {
  n: number;
  clauses: Cnf;
  [k: string]: unknown;
}

/** Verify a response against a CNF. Never throws. */
export function verifySat(response: string, meta: SatMeta): Verdict {
  const region = answerRegion(response);
  if (region === null) return fail("no answer found");
  const a = parseAssignment(region, meta.n);
  if (typeof a === "string") return fail(a, region);
  if (a.size === 0) return fail("no assignment found", region);
  const extracted = [...a.entries()].sort((x, y) => x[0] - y[0]).map(([v, b]) => (b ? v : -v)).join(" ");
  const bad = meta.clauses.findIndex((c) => !c.some((l) => a.get(Math.abs(l)) === l > 0));
  if (bad >= 0) return fail(`clause ${bad + 1} (${meta.clauses[bad]!.join(" ")}) is not satisfied`, extracted);
  return pass(extracted);
}

/** Options for the SAT task. */
export interface SatOptions {
  /** Clauses per variable (default 4.0). */
  ratio?: number;
}

/** Build the random 3-SAT task. */
export function createSatTask(opts: SatOptions = {}): Task {
  const name = "sat";
  const ratio = opts.ratio ?? 4.0;
  const make = (rng: Rng, n: number) => {
    const m = Math.max(1, Math.round(ratio * n));
    for (let attempt = 0; attempt < 10000; attempt++) {
      const clauses: Cnf = [];
      for (let i = 0; i < m; i++) {
        const vars = rng.shuffle(Array.from({ length: n }, (_, k) => k + 1)).slice(0, 3);
        clauses.push(vars.map((v) => (rng.chance(0.5) ? v : -v)));
      }
      const model = solveSat(clauses, n);
      if (model === null) continue;
      const text = clauses.map((c) => `(${c.join(" ")})`).join(" ");
      const prompt =
        `Find values for x1..x${n} that satisfy every clause. In a clause, k means xk is true and -k means xk is false; ` +
        `a clause holds when at least one of its literals holds.\nClauses: ${text}\n` +
        `Answer with one literal per variable, like <answer>1 -2 3</answer>.`;
      const lits = Array.from({ length: n }, (_, k) => (model[k + 1] ? k + 1 : -(k + 1))).join(" ");
      const meta: SatMeta = { n, clauses };
      return { prompt, answer: lits, solution: `<answer>${lits}</answer>`, meta };
    }
    throw new Error(`sat: no satisfiable instance with ${n} variables at ratio ${ratio}`);
  };
  return {
    name,
    difficulties: { min: 3, max: 30, default: 5, description: `number of variables n; round(${ratio}·n) random 3-literal clauses; satisfiable only` },
    generate(g: GenerateOptions): Example {
      checkDifficulty(name, g.difficulty, 3, 30);
      return generateInSplit(name, g, (rng) => make(rng, g.difficulty));
    },
    verify(response: string, example: Example): Verdict {
      const meta = example.meta as SatMeta | undefined;
      if (!meta || !Array.isArray(meta.clauses) || typeof meta.n !== "number") return fail("example has no sat meta");
      return verifySat(response, meta);
    },
  };
}

/** Random satisfiable 3-SAT; difficulty = number of variables. */
export const satTask: Task = createSatTask();
