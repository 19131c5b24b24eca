/**
 * Jigsaw / permutation ordering: an increasing run of numbers is cut into pieces, the pieces are
 * shuffled and labelled A, B, C, …; restore the order. Difficulty = number of pieces (2..12).
 *
 * Prompt: `Put the pieces in order so the numbers increase: A=[14 15] B=[9 11 12] C=[17]. Answer with the letters.`
 * Answer: `BAC` (letters with or without separators, e.g. "B A C", "B, A, C").
 * The verifier accepts any order of all pieces whose concatenation strictly increases (the
 * numbers are distinct, so that order is unique, and it is the stored one).
 */
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";
import type { Rng } from "./rng.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";
import { answerRegion, fail, pass } from "./answer.ts";

/** Jigsaw instance data kept in `Example.meta`: pieces by label, in label order. */
export interface JigsawMeta {
  pieces: number[][];
  [k: string]: unknown;
}

const LABELS = "ABCDEFGHIJKL";

/** Verify an ordering of labelled pieces. Never throws. */
export function verifyJigsaw(response: string, meta: JigsawMeta): Verdict {
  const region = answerRegion(response);
  if (region === null) return fail("no answer found");
  const k = meta.pieces.length;
  // Words made only of upper-case labels ("BAC", "B A C", "B, A, C", "B -> A -> C"); keep the last k letters.
  const letters = (region.match(/[A-Za-z]+/g) ?? []).filter((w) => /^[A-L]+$/.test(w)).join("");
  const order = letters.length >= k ? letters.slice(-k) : letters;
  if (order.length === 0) return fail("no piece labels found", region);
  if (order.length !== k) return fail(`expected ${k} labels, got ${order.length}`, order);
  const idx = [...order].map((ch) => LABELS.indexOf(ch));
  if (idx.some((i) => i < 0 || i >= k)) return fail(`unknown piece label in "${order}"`, order);
  if (new Set(idx).size !== k) return fail(`a piece is used twice in "${order}"`, order);
  const seq = idx.flatMap((i) => meta.pieces[i]!);
  for (let i = 1; i < seq.length; i++) if (seq[i]! <= seq[i - 1]!) return fail("the numbers do not increase in this order", order);
  return pass(order);
}

/** Options for the jigsaw task. */
export interface JigsawOptions {
  /**
   * Compact prompts for small character-level models: only the pieces, e.g. `A=[7 10] B=[1 4]`
   * (answer `BA`), without the instruction sentence. Registered as `jigsaw-compact`.
   */
  compact?: boolean;
}

/** Build the jigsaw task. */
export function createJigsawTask(opts: JigsawOptions = {}): Task {
  const name = opts.compact ? "jigsaw-compact" : "jigsaw";
  const make = (rng: Rng, k: number) => {
    const length = k + rng.int(0, k);
    const seq: number[] = [];
    let x = rng.int(1, 20);
    for (let i = 0; i < length; i++) {
      seq.push(x);
      x += rng.int(1, 3);
    }
    // Cut into k non-empty pieces.
    const cuts = rng.shuffle(Array.from({ length: length - 1 }, (_, i) => i + 1)).slice(0, k - 1).sort((a, b) => a - b);
    const inOrder: number[][] = [];
    let start = 0;
    for (const c of [...cuts, length]) {
      inOrder.push(seq.slice(start, c));
      start = c;
    }
    const perm = rng.shuffle(Array.from({ length: k }, (_, i) => i)); // perm[label] = position in order
    const pieces = perm.map((p) => inOrder[p]!);
    const order = Array.from({ length: k }, (_, pos) => LABELS[perm.indexOf(pos)]!).join("");
    const shown = pieces.map((p, i) => `${LABELS[i]}=[${p.join(" ")}]`).join(" ");
    const prompt = opts.compact ? shown : `Put the pieces in order so the numbers increase: ${shown}. Answer with the letters.`;
    const meta: JigsawMeta = { pieces };
    return { prompt, answer: order, solution: order, meta };
  };
  return {
    name,
    difficulties: { min: 2, max: 12, default: 3, description: "number of pieces; the run has k..2k increasing numbers (steps 1-3)" },
    generate(g: GenerateOptions): Example {
      checkDifficulty(name, g.difficulty, 2, 12);
      return generateInSplit(name, g, (rng) => make(rng, g.difficulty));
    },
    verify(response: string, example: Example): Verdict {
      const meta = example.meta as JigsawMeta | undefined;
      if (!meta || !Array.isArray(meta.pieces)) return fail("example has no jigsaw meta");
      return verifyJigsaw(response, meta);
    },
  };
}

/** Jigsaw ordering; difficulty = number of pieces. */
export const jigsawTask: Task = createJigsawTask();

/** Jigsaw ordering with compact prompts (`A=[7 10] B=[1 4]` → `BA`); difficulty = number of pieces. */
export const compactJigsawTask: Task = createJigsawTask({ compact: true });
