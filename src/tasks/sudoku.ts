/**
 * Mini-Sudoku (4×4 with 2×2 boxes, 6×6 with 2×3 boxes, 9×9 with 3×3 boxes) with a unique
 * solution. Difficulty 1..12 picks the size and the number of blanks:
 *
 *   d:      1  2  3  4 |  5  6  7  8 |  9 10 11 12
 *   size:   4  4  4  4 |  6  6  6  6 |  9  9  9  9
 *   blanks: 4  6  8 10 | 10 14 18 22 | 30 38 45 52
 *
 * Generation: a random full grid (randomised backtracking), then cells are blanked in random
 * order, keeping a blank only if the puzzle still has exactly one solution (a counting solver
 * that stops at 2), until the target number of blanks is reached.
 *
 * Answer format: the full grid, one row per line (spaces, `|` and commas ignored), ideally in
 * `<answer>…</answer>`; without tags, the last `size` lines that hold digits. The verifier checks
 * that the grid keeps every given, and that every row, column and box holds 1..size once.
 */
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";
import type { Rng } from "./rng.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";
import { fail, pass } from "./answer.ts";

const LEVELS: { size: number; blanks: number }[] = [
  { size: 4, blanks: 4 }, { size: 4, blanks: 6 }, { size: 4, blanks: 8 }, { size: 4, blanks: 10 },
  { size: 6, blanks: 10 }, { size: 6, blanks: 14 }, { size: 6, blanks: 18 }, { size: 6, blanks: 22 },
  { size: 9, blanks: 30 }, { size: 9, blanks: 38 }, { size: 9, blanks: 45 }, { size: 9, blanks: 52 },
];

/** Box height and width for a grid size. */
export function boxShape(size: number): [number, number] {
  if (size === 4) return [2, 2];
  if (size === 6) return [2, 3];
  if (size === 9) return [3, 3];
  throw new RangeError(`sudoku: size must be 4, 6 or 9, got ${size}`);
}

/**
 * Count solutions of a grid (0 = blank), stopping at `limit`; when `rng` is given, candidate
 * digits are tried in random order and the first solution is written into `out`.
 */
export function countSudokuSolutions(grid: number[], size: number, limit = 2, rng?: Rng, out?: number[]): number {
  const [bh, bw] = boxShape(size);
  const g = grid.slice();
  const row = new Array(size).fill(0);
  const col = new Array(size).fill(0);
  const box = new Array(size).fill(0);
  const boxOf = (r: number, c: number) => Math.floor(r / bh) * (size / bw) + Math.floor(c / bw);
  for (let i = 0; i < size * size; i++) {
    const v = g[i]!;
    if (v === 0) continue;
    const r = Math.floor(i / size), c = i % size, bit = 1 << v;
    if ((row[r] | col[c] | box[boxOf(r, c)]) & bit) return 0;
    row[r] |= bit;
    col[c] |= bit;
    box[boxOf(r, c)] |= bit;
  }
  let count = 0;
  const full = ((1 << (size + 1)) - 1) & ~1;
  const rec = (): boolean => {
    // Most constrained empty cell.
    let best = -1, bestMask = 0, bestN = 99;
    for (let i = 0; i < size * size; i++) {
      if (g[i] !== 0) continue;
      const r = Math.floor(i / size), c = i % size;
      const mask = full & ~(row[r] | col[c] | box[boxOf(r, c)]);
      let n = 0;
      for (let m = mask; m; m &= m - 1) n++;
      if (n < bestN) [best, bestMask, bestN] = [i, mask, n];
      if (n === 0) return false;
    }
    if (best < 0) {
      count++;
      if (out && count === 1) for (let i = 0; i < g.length; i++) out[i] = g[i]!;
      return count >= limit;
    }
    const r = Math.floor(best / size), c = best % size, b = boxOf(r, c);
    let digits: number[] = [];
    for (let v = 1; v <= size; v++) if (bestMask & (1 << v)) digits.push(v);
    if (rng) digits = rng.shuffle(digits);
    for (const v of digits) {
      const bit = 1 << v;
      g[best] = v;
      row[r] |= bit; col[c] |= bit; box[b] |= bit;
      const stop = rec();
      row[r] &= ~bit; col[c] &= ~bit; box[b] &= ~bit;
      g[best] = 0;
      if (stop) return true;
    }
    return false;
  };
  rec();
  return count;
}

/** Check a full grid: digits 1..size, each row/column/box a permutation, givens kept. Returns a reason or null. */
export function sudokuProblem(grid: number[], puzzle: number[], size: number): string | null {
  const [bh, bw] = boxShape(size);
  if (grid.length !== size * size) return `expected ${size * size} digits, got ${grid.length}`;
  for (let i = 0; i < grid.length; i++) {
    if (grid[i]! < 1 || grid[i]! > size) return `digit ${grid[i]} is outside 1..${size}`;
    if (puzzle[i] !== 0 && puzzle[i] !== grid[i]) return `changes the given ${puzzle[i]} at row ${Math.floor(i / size) + 1}, column ${(i % size) + 1}`;
  }
  const units: [string, number[]][] = [];
  for (let k = 0; k < size; k++) {
    units.push([`row ${k + 1}`, Array.from({ length: size }, (_, c) => k * size + c)]);
    units.push([`column ${k + 1}`, Array.from({ length: size }, (_, r) => r * size + k)]);
    const br = Math.floor(k / (size / bw)) * bh, bc = (k % (size / bw)) * bw;
    const cells: number[] = [];
    for (let r = 0; r < bh; r++) for (let c = 0; c < bw; c++) cells.push((br + r) * size + bc + c);
    units.push([`box ${k + 1}`, cells]);
  }
  for (const [label, cells] of units) {
    if (new Set(cells.map((i) => grid[i])).size !== size) return `${label} repeats a digit`;
  }
  return null;
}

/** Render a grid as lines of digits ("." for blanks). */
export function renderGrid(grid: number[], size: number): string {
  const lines: string[] = [];
  for (let r = 0; r < size; r++) lines.push(grid.slice(r * size, r * size + size).map((v) => (v === 0 ? "." : String(v))).join(""));
  return lines.join("\n");
}

/** Sudoku instance data kept in `Example.meta`. */
export interface SudokuMeta {
  size: number;
  /** Row-major puzzle, 0 = blank. */
  puzzle: number[];
  [k: string]: unknown;
}

/** Pull the grid digits out of a response (see the module doc). */
export function extractGrid(response: string, size: number): number[] | null {
  if (typeof response !== "string") return null;
  const tagged = [...response.matchAll(/<answer>([\s\S]*?)(?:<\/answer>|$)/g)];
  let text: string;
  if (tagged.length > 0) text = tagged[tagged.length - 1]![1]!;
  else {
    const lines = response.split(/\r?\n/).filter((l) => /\d/.test(l));
    text = lines.slice(-size).join("\n");
  }
  const digits = text.match(/\d/g);
  return digits ? digits.map(Number) : null;
}

/** Verify a response against a Sudoku puzzle. Never throws. */
export function verifySudoku(response: string, meta: SudokuMeta): Verdict {
  const grid = extractGrid(response, meta.size);
  if (grid === null) return fail("no grid found");
  const extracted = grid.length === meta.size * meta.size ? renderGrid(grid, meta.size) : grid.join("");
  const why = sudokuProblem(grid, meta.puzzle, meta.size);
  return why === null ? pass(extracted) : fail(why, extracted);
}

/** Options for the Sudoku task. */
export interface SudokuOptions {
  name?: string;
}

/** Build the Sudoku task. */
export function createSudokuTask(opts: SudokuOptions = {}): Task {
  const name = opts.name ?? "sudoku";
  const make = (rng: Rng, size: number, blanks: number) => {
    const [bh, bw] = boxShape(size);
    for (let attempt = 0; attempt < 200; attempt++) {
      const solution = new Array(size * size).fill(0);
      countSudokuSolutions(new Array(size * size).fill(0), size, 1, rng, solution);
      const puzzle = solution.slice();
      let removed = 0;
      for (const i of rng.shuffle(Array.from({ length: size * size }, (_, k) => k))) {
        if (removed === blanks) break;
        const keep = puzzle[i]!;
        puzzle[i] = 0;
        if (countSudokuSolutions(puzzle, size, 2) === 1) removed++;
        else puzzle[i] = keep;
      }
      if (removed < blanks) continue;
      const prompt =
        `Solve this ${size}x${size} Sudoku (boxes ${bh}x${bw}): every row, column and box must hold the digits 1-${size} once. ` +
        `Blanks are dots.\n${renderGrid(puzzle, size)}\nAnswer with the full grid, one row per line, inside <answer></answer>.`;
      const full = renderGrid(solution, size);
      const meta: SudokuMeta = { size, puzzle };
      return { prompt, answer: full, solution: `<answer>\n${full}\n</answer>`, meta };
    }
    throw new Error(`sudoku: could not make a ${size}x${size} puzzle with ${blanks} blanks and a unique solution`);
  };
  return {
    name,
    difficulties: {
      min: 1,
      max: LEVELS.length,
      default: 2,
      description: "1-4: 4x4 with 4/6/8/10 blanks; 5-8: 6x6 with 10/14/18/22 blanks; 9-12: 9x9 with 30/38/45/52 blanks; unique solution",
    },
    generate(g: GenerateOptions): Example {
      checkDifficulty(name, g.difficulty, 1, LEVELS.length);
      const { size, blanks } = LEVELS[g.difficulty - 1]!;
      return generateInSplit(name, g, (rng) => make(rng, size, blanks));
    },
    verify(response: string, example: Example): Verdict {
      const meta = example.meta as SudokuMeta | undefined;
      if (!meta || !Array.isArray(meta.puzzle) || typeof meta.size !== "number") return fail("example has no sudoku meta");
      return verifySudoku(response, meta);
    },
  };
}

/** Mini-Sudoku; difficulty 1..12 (size and blanks, see the module doc). */
export const sudokuTask: Task = createSudokuTask();
