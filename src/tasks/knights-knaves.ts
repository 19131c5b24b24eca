/**
 * Knights & Knaves: knights always tell the truth, knaves always lie; from what each inhabitant
 * says, decide who is which. Difficulty = number of inhabitants (2..8).
 *
 * Generation: draw a hidden assignment, then one statement per inhabitant (an atom "X is a
 * knight/knave", or two atoms joined by and / or / if-then / if-and-only-if), kept only when it is
 * true exactly when its speaker is a knight. The puzzle is accepted only if exactly one
 * assignment of all 2^n is consistent with every statement (checked by enumeration), so the
 * solution is unique.
 *
 * Answer format: `<answer>Alice: knight, Bob: knave</answer>` (also "Alice is a knight", in any
 * order). The verifier checks that every inhabitant is labelled once and that the labelling is
 * consistent with all statements (which, by uniqueness, means it is the solution).
 */
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";
import type { Rng } from "./rng.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";
import { answerRegion, fail, pass } from "./answer.ts";

const NAMES = [
  "Alice", "Bruno", "Clara", "Diego", "Elena", "Felix", "Greta", "Hugo", "Iris", "Jonas",
  "Kira", "Liam", "Maya", "Nico", "Olga", "Pablo", "Quinn", "Rosa", "Sven", "Tara",
  "Umar", "Vera", "Wade", "Xena", "Yusuf", "Zoe",
];

/** A statement about inhabitants (indices into the name list of the puzzle). */
export type Statement =
  | { kind: "is"; who: number; knight: boolean }
  | { kind: "and" | "or" | "implies" | "iff"; a: Statement; b: Statement };

/** Truth value of a statement under an assignment (true = knight). */
export function evalStatement(s: Statement, knights: boolean[]): boolean {
  switch (s.kind) {
    case "is":
      return knights[s.who] === s.knight;
    case "and":
      return evalStatement(s.a, knights) && evalStatement(s.b, knights);
    case "or":
      return evalStatement(s.a, knights) || evalStatement(s.b, knights);
    case "implies":
      return !evalStatement(s.a, knights) || evalStatement(s.b, knights);
    case "iff":
      return evalStatement(s.a, knights) === evalStatement(s.b, knights);
  }
}

/** English rendering of a statement from the speaker's point of view. */
export function renderStatement(s: Statement, names: string[], speaker: number): string {
  const atom = (x: Statement & { kind: "is" }) => `${x.who === speaker ? "I am" : `${names[x.who]} is`} a ${x.knight ? "knight" : "knave"}`;
  if (s.kind === "is") return atom(s);
  const a = renderStatement(s.a, names, speaker);
  const b = renderStatement(s.b, names, speaker);
  switch (s.kind) {
    case "and":
      return `${a} and ${b}`;
    case "or":
      return `${a} or ${b}`;
    case "implies":
      return `if ${a} then ${b}`;
    case "iff":
      return `${a} if and only if ${b}`;
  }
}

/** Whether an assignment is consistent: each speaker's statement is true iff the speaker is a knight. */
export function consistent(statements: Statement[], knights: boolean[]): boolean {
  return statements.every((s, i) => evalStatement(s, knights) === knights[i]);
}

/** Number of consistent assignments (enumerates all 2^n). */
export function countSolutions(statements: Statement[], n: number): number {
  let count = 0;
  const k: boolean[] = new Array(n).fill(false);
  for (let mask = 0; mask < 1 << n; mask++) {
    for (let i = 0; i < n; i++) k[i] = ((mask >> i) & 1) === 1;
    if (consistent(statements, k)) count++;
  }
  return count;
}

function randomStatement(rng: Rng, n: number, speaker: number): Statement {
  const atom = (): Statement => {
    let who = rng.int(0, n - 1);
    if (who === speaker && n > 1 && rng.chance(0.7)) who = (who + rng.int(1, n - 1)) % n;
    return { kind: "is", who, knight: rng.chance(0.5) };
  };
  if (rng.chance(0.35)) return atom();
  const a = atom();
  let b = atom();
  for (let t = 0; t < 5 && b.kind === "is" && a.kind === "is" && b.who === a.who; t++) b = atom();
  return { kind: rng.pick(["and", "or", "implies", "iff"] as const), a, b };
}

/** Knights & Knaves instance data kept in `Example.meta`. */
export interface KnightsKnavesMeta {
  names: string[];
  statements: Statement[];
  knights: boolean[];
  [k: string]: unknown;
}

/** Parse "Name: knight" / "Name is a knave" labels for the given names from a text. */
export function parseLabels(text: string, names: string[]): { labels: (boolean | null)[]; conflict: string | null } {
  const labels: (boolean | null)[] = names.map(() => null);
  for (let i = 0; i < names.length; i++) {
    const re = new RegExp(`\\b${names[i]}\\b\\s*(?:is\\s+(?:a\\s+)?|:|=|-|\\()?\\s*(knights?|knaves?)\\b`, "gi");
    for (const m of text.matchAll(re)) {
      const v = m[1]!.toLowerCase().startsWith("knight");
      if (labels[i] !== null && labels[i] !== v) return { labels, conflict: `${names[i]} is labelled both knight and knave` };
      labels[i] = v;
    }
  }
  return { labels, conflict: null };
}

function formatSolution(names: string[], knights: boolean[]): string {
  return names.map((nm, i) => `${nm}: ${knights[i] ? "knight" : "knave"}`).join(", ");
}

/** Verify a response against a Knights & Knaves instance. Never throws. */
export function verifyKnightsKnaves(response: string, meta: KnightsKnavesMeta): Verdict {
  const region = answerRegion(response);
  if (region === null) return fail("no answer found");
  const { labels, conflict } = parseLabels(region, meta.names);
  if (conflict) return fail(conflict, region);
  const missing = meta.names.filter((_, i) => labels[i] === null);
  if (missing.length === meta.names.length) return fail("no answer found", region);
  if (missing.length > 0) return fail(`no label for ${missing.join(", ")}`, region);
  const knights = labels as boolean[];
  const extracted = formatSolution(meta.names, knights);
  if (!consistent(meta.statements, knights)) return fail("inconsistent with the statements", extracted);
  return pass(extracted);
}

/** Build the Knights & Knaves task. */
export function createKnightsKnavesTask(): Task {
  const name = "knights-knaves";
  const make = (rng: Rng, n: number) => {
    const names = rng.shuffle(NAMES).slice(0, n);
    for (let attempt = 0; attempt < 5000; attempt++) {
      const knights = Array.from({ length: n }, () => rng.chance(0.5));
      const statements: Statement[] = [];
      for (let i = 0; i < n; i++) {
        let s = randomStatement(rng, n, i);
        for (let t = 0; t < 50 && evalStatement(s, knights) !== knights[i]; t++) s = randomStatement(rng, n, i);
        statements.push(s);
      }
      if (!consistent(statements, knights) || countSolutions(statements, n) !== 1) continue;
      const lines = statements.map((s, i) => `${names[i]} says: "${renderStatement(s, names, i)}."`);
      const prompt =
        `On this island every inhabitant is a knight, who always tells the truth, or a knave, who always lies. ` +
        `You meet ${n}: ${names.join(", ")}.\n${lines.join("\n")}\n` +
        `Who is a knight and who is a knave? Label everyone, e.g. <answer>Name1: knight, Name2: knave</answer>.`;
      const meta: KnightsKnavesMeta = { names, statements, knights };
      const solution = `<answer>${formatSolution(names, knights)}</answer>`;
      return { prompt, answer: formatSolution(names, knights), solution, meta };
    }
    throw new Error(`knights-knaves: no unique puzzle found for ${n} people`);
  };
  return {
    name,
    difficulties: { min: 2, max: 8, default: 3, description: "number of inhabitants (one statement each); the solution is unique" },
    generate(g: GenerateOptions): Example {
      checkDifficulty(name, g.difficulty, 2, 8);
      return generateInSplit(name, g, (rng) => make(rng, g.difficulty));
    },
    verify(response: string, example: Example): Verdict {
      const meta = example.meta as KnightsKnavesMeta | undefined;
      if (!meta || !Array.isArray(meta.names) || !Array.isArray(meta.statements)) return fail("example has no knights-knaves meta");
      return verifyKnightsKnaves(response, meta);
    },
  };
}

/** Knights & Knaves; difficulty = number of inhabitants (2..8). */
export const knightsKnavesTask: Task = createKnightsKnavesTask();
