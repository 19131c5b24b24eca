/**
 * Countdown: reach a target with the given numbers and + − × ÷ (the numbers game popularised as
 * an RL task by TinyZero). Difficulty = how many numbers are given (3..6).
 *
 * Generation: draw the numbers (1..maxNumber), then combine them all in a random binary tree of
 * operations whose intermediate values stay positive integers, until the result lands in
 * [1, maxTarget]. So every instance is solvable even when each number must be used exactly once,
 * and `solution` holds one such expression (e.g. "(55 - 36) * 7 - 19").
 *
 * Verifier: takes the last `<answer>…</answer>` block if present (its whole content must be the
 * expression), else the last non-empty line (the longest run of expression characters in it);
 * an `= target` side is allowed. It parses it with exact
 * rational arithmetic (no eval; + − × ÷ * / and parentheses; unary minus allowed) and checks that
 * every number used is one of the given numbers, used at most once (or, with
 * `usage: "exactly-once"`, that all are used exactly once), and that the value equals the target.
 */
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";
import type { Rng } from "./rng.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";
import { ExprError, Rational, evaluateExpression } from "./expr.ts";

/** Options for the Countdown task. */
export interface CountdownOptions {
  /** How often each given number may be used: "at-most-once" (default, as in TinyZero) or "exactly-once". */
  usage?: "at-most-once" | "exactly-once";
  /** Largest given number (default 100; numbers are drawn from 1..maxNumber). */
  maxNumber?: number;
  /** Largest target (default 100). Targets are in [1, maxTarget]. */
  maxTarget?: number;
  /** Task name (default "countdown"). */
  name?: string;
}

/** Countdown instance data kept in `Example.meta`. */
export interface CountdownMeta {
  numbers: number[];
  target: number;
  usage: "at-most-once" | "exactly-once";
  [k: string]: unknown;
}

interface Node {
  value: number;
  expr: string;
  /** Precedence of the node's top operator: 3 for a number, 2 for * and /, 1 for + and -. */
  prec: number;
}

/** Combine two nodes with an operator, adding only the parentheses that are needed. */
function combine(a: Node, op: "+" | "-" | "*" | "/", b: Node, value: number): Node {
  const prec = op === "+" || op === "-" ? 1 : 2;
  const left = a.prec < prec ? `(${a.expr})` : a.expr;
  const right = b.prec < prec || (b.prec === prec && (op === "-" || op === "/")) ? `(${b.expr})` : b.expr;
  return { value, expr: `${left} ${op} ${right}`, prec };
}

/** Try to build a random expression tree over all `numbers`; null if it left the allowed range. */
function randomTree(rng: Rng, numbers: number[], maxTarget: number): Node | null {
  let pool: Node[] = numbers.map((n) => ({ value: n, expr: String(n), prec: 3 }));
  while (pool.length > 1) {
    const i = rng.int(0, pool.length - 1);
    let j = rng.int(0, pool.length - 2);
    if (j >= i) j++;
    let a = pool[i]!;
    let b = pool[j]!;
    if (a.value < b.value) [a, b] = [b, a];
    const choices: Node[] = [combine(a, "+", b, a.value + b.value)];
    if (a.value > b.value) choices.push(combine(a, "-", b, a.value - b.value));
    if (a.value * b.value <= maxTarget * 20) choices.push(combine(a, "*", b, a.value * b.value));
    if (b.value > 1 && a.value % b.value === 0) choices.push(combine(a, "/", b, a.value / b.value));
    const c = rng.pick(choices);
    pool = pool.filter((_, k) => k !== i && k !== j);
    pool.push(c);
  }
  const root = pool[0]!;
  return root.value >= 1 && root.value <= maxTarget ? root : null;
}

/** Pick the expression out of a response (see the module doc). Returns null when none is found. */
export function extractCountdownExpression(response: string): string | null {
  if (typeof response !== "string") return null;
  let text: string;
  const tagged = [...response.matchAll(/<answer>([\s\S]*?)(?:<\/answer>|$)/g)];
  if (tagged.length > 0) {
    // Inside the tags the whole content must be the expression (an "= target" side is allowed).
    text = tagged[tagged.length - 1]![1]!;
  } else {
    const lines = response.split(/\r?\n/).filter((l) => l.trim() !== "");
    if (lines.length === 0) return null;
    // On a free-text line, keep the run of expression characters with the most numbers (ties: the last).
    const runs = lines[lines.length - 1]!.match(/[0-9.+\-\u2212\u2013*\u00d7\u00b7/\u00f7()[\]\s=]+/g) ?? [];
    let best: string | null = null;
    let bestCount = 0;
    for (const run of runs) {
      const count = (run.match(/\d+/g) ?? []).length;
      if (count > 0 && count >= bestCount) {
        best = run;
        bestCount = count;
      }
    }
    if (best === null) return null;
    text = best;
  }
  // "a + b = 65": keep the side with the most numbers (ties: the leftmost); drop a final period.
  const sides = text.split("=").map((s) => s.trim().replace(/\.$/, "").trim()).filter((s) => s !== "");
  let side: string | null = null;
  let sideCount = -1;
  for (const s of sides) {
    const count = (s.match(/\d+/g) ?? []).length;
    if (count > sideCount) {
      side = s;
      sideCount = count;
    }
  }
  return side;
}

/** Check that `used` draws from `given` respecting `usage`; returns a reason string or null if fine. */
function checkUsage(used: number[], given: number[], usage: "at-most-once" | "exactly-once"): string | null {
  const left = new Map<number, number>();
  for (const n of given) left.set(n, (left.get(n) ?? 0) + 1);
  const seen = new Map<number, number>();
  for (const n of used) {
    seen.set(n, (seen.get(n) ?? 0) + 1);
    const have = left.get(n);
    if (have === undefined) return `uses ${n}, which is not one of the given numbers`;
    if (have === 0) return `uses ${n} ${seen.get(n)} times but it is given ${given.filter((g) => g === n).length} time(s)`;
    left.set(n, have - 1);
  }
  if (usage === "exactly-once") {
    const unused = [...left.entries()].filter(([, c]) => c > 0).map(([n]) => n);
    if (unused.length > 0) return `does not use ${unused.join(", ")}`;
  }
  return null;
}

/**
 * Verify a Countdown response given the numbers, target and usage rule. Never throws.
 * @returns correct when the extracted expression uses allowed numbers and equals the target exactly.
 */
export function verifyCountdown(response: string, numbers: number[], target: number, usage: "at-most-once" | "exactly-once" = "at-most-once"): Verdict {
  const expr = extractCountdownExpression(response);
  if (expr === null) return { correct: false, reward: 0, extracted: null, reason: "no expression found" };
  let value: Rational;
  let used: number[];
  try {
    const ev = evaluateExpression(expr);
    value = ev.value;
    used = ev.numbers;
  } catch (e) {
    const why = e instanceof ExprError ? e.message : String(e);
    return { correct: false, reward: 0, extracted: expr, reason: `cannot parse expression: ${why}` };
  }
  const bad = checkUsage(used, numbers, usage);
  if (bad !== null) return { correct: false, reward: 0, extracted: expr, reason: bad };
  if (!value.equals(Rational.of(target))) {
    return { correct: false, reward: 0, extracted: expr, reason: `evaluates to ${value.toString()}, not ${target}` };
  }
  return { correct: true, reward: 1, extracted: expr, reason: "ok" };
}

/** Build the Countdown task. */
export function createCountdownTask(opts: CountdownOptions = {}): Task {
  const name = opts.name ?? "countdown";
  const usage = opts.usage ?? "at-most-once";
  const maxNumber = opts.maxNumber ?? 100;
  const maxTarget = opts.maxTarget ?? 100;
  const rule = usage === "exactly-once" ? "each number exactly once" : "each number at most once";

  const make = (rng: Rng, count: number) => {
    for (let attempt = 0; attempt < 10000; attempt++) {
      const numbers = Array.from({ length: count }, () => rng.int(1, maxNumber));
      const root = randomTree(rng, numbers, maxTarget);
      if (root === null) continue;
      const target = root.value;
      const prompt =
        `Using the numbers [${numbers.join(", ")}], make ${target}. ` +
        `Use + - * / and parentheses, ${rule}. Give the expression in <answer></answer>.`;
      const meta: CountdownMeta = { numbers, target, usage };
      return { prompt, answer: String(target), solution: root.expr, meta, key: `${[...numbers].sort((x, y) => x - y).join(",")}>${target}` };
    }
    throw new Error(`countdown: could not build an instance with ${count} numbers <= ${maxNumber} and target <= ${maxTarget}`);
  };

  return {
    name,
    difficulties: {
      min: 3,
      max: 6,
      default: 4,
      description: `number of given numbers (each 1..${maxNumber}); target in [1, ${maxTarget}], reachable using all of them`,
    },
    generate(g: GenerateOptions): Example {
      checkDifficulty(name, g.difficulty, 3, 6);
      return generateInSplit(name, g, (rng) => make(rng, g.difficulty));
    },
    verify(response: string, example: Example): Verdict {
      const meta = example.meta as Partial<CountdownMeta> | undefined;
      if (!meta || !Array.isArray(meta.numbers) || typeof meta.target !== "number") {
        return { correct: false, reward: 0, extracted: null, reason: "example has no countdown meta (numbers, target)" };
      }
      return verifyCountdown(response, meta.numbers, meta.target, meta.usage ?? usage);
    },
  };
}

/** Countdown with TinyZero's rule (each number at most once), numbers 1..100, targets 1..100. */
export const countdownTask: Task = createCountdownTask();
