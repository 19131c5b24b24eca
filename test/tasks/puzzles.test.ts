// Task-specific verifier tests: alternative valid solutions, wrong and malformed answers, uniqueness.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  generateExamples,
  knightsKnavesTask,
  countSolutions,
  parseLabels,
  satTask,
  solveSat,
  verifySat,
  parseAssignment,
  sudokuTask,
  countSudokuSolutions,
  verifySudoku,
  jigsawTask,
  compactJigsawTask,
  graphTask,
  shortestPath,
  verifyGraph,
  datesTask,
  parseDate,
  parseWeekday,
  dayOf,
  weekdayOf,
  formatDay,
  type Example,
  type KnightsKnavesMeta,
  type SatMeta,
  type SudokuMeta,
  type GraphMeta,
} from "../../src/tasks/index.ts";

test("knights & knaves: unique solution; any consistent labelling in any format passes; wrong ones fail", () => {
  for (const d of [2, 4, 6]) {
    for (const ex of generateExamples(knightsKnavesTask, { n: 15, seed: 3, difficulty: d })) {
      const m = ex.meta as KnightsKnavesMeta;
      assert.equal(countSolutions(m.statements, d), 1);
      const prose = m.names.map((nm, i) => `${nm} is a ${m.knights[i] ? "knight" : "knave"}`).reverse().join(". ");
      assert.equal(knightsKnavesTask.verify(`Let me think.\n<answer>${prose}</answer>`, ex).correct, true);
      assert.equal(knightsKnavesTask.verify(prose, ex).correct, true); // last line, no tags
      // flip one person
      const flipped = m.names.map((nm, i) => `${nm}: ${(i === 0) !== m.knights[i] ? "knight" : "knave"}`).join(", ");
      assert.equal(knightsKnavesTask.verify(`<answer>${flipped}</answer>`, ex).reason, "inconsistent with the statements");
      const partial = m.names.slice(1).map((nm, i) => `${nm}: ${m.knights[i + 1] ? "knight" : "knave"}`).join(", ");
      assert.equal(knightsKnavesTask.verify(`<answer>${partial}</answer>`, ex).reason, `no label for ${m.names[0]}`);
    }
  }
  assert.deepEqual(parseLabels("Alice: knight, Alice is a knave", ["Alice"]).conflict, "Alice is labelled both knight and knave");
  assert.deepEqual(parseLabels("alice (knaves) and BRUNO = Knight", ["Alice", "Bruno"]).labels, [false, true]);
});

test("sat: instances are satisfiable; a different satisfying assignment is accepted", () => {
  let alternatives = 0;
  for (const ex of generateExamples(satTask, { n: 40, seed: 5, difficulty: 6 })) {
    const m = ex.meta as SatMeta;
    assert.equal(m.clauses.length, 24);
    assert.ok(m.clauses.every((c) => c.length === 3 && new Set(c.map(Math.abs)).size === 3));
    assert.notEqual(solveSat(m.clauses, m.n), null);
    // Enumerate all models; every one must verify, every non-model must fail.
    const stored = ex.answer;
    for (let mask = 0; mask < 1 << m.n; mask++) {
      const lits = Array.from({ length: m.n }, (_, k) => ((mask >> k) & 1 ? k + 1 : -(k + 1)));
      const isModel = m.clauses.every((c) => c.some((l) => lits[Math.abs(l) - 1] === l));
      const v = satTask.verify(`<answer>${lits.join(" ")}</answer>`, ex);
      assert.equal(v.correct, isModel);
      if (isModel && lits.join(" ") !== stored) alternatives++;
      if (!isModel) assert.match(v.reason, /^clause \d+ \(.*\) is not satisfied$/);
    }
  }
  assert.ok(alternatives > 0, "expected some instances with more than one model");
  const meta: SatMeta = { n: 3, clauses: [[1, 2, 3], [-1, -2, 3]] };
  assert.equal(verifySat("x1 = true, x2 = false, x3 = 0", meta).correct, true);
  assert.equal(verifySat("<answer>x3=1</answer>", meta).correct, true); // partial, but every clause holds
  assert.equal(verifySat("¬x1 ∧ ¬x2 ∧ x3", meta).correct, true);
  assert.equal(verifySat("not x1, not x2, not x3", meta).correct, false);
  assert.equal(verifySat("<answer>1 -1 3</answer>", meta).reason, "x1 is set both true and false");
  assert.equal(verifySat("<answer>1 2 7</answer>", meta).reason, "variable 7 is out of range 1..3");
  assert.equal(verifySat("<answer>none</answer>", meta).reason, "no assignment found");
  assert.deepEqual([...(parseAssignment("1 -2 3 0", 3) as Map<number, boolean>)], [[1, true], [2, false], [3, true]]);
  assert.equal(solveSat([[1], [-1]], 1), null);
});

test("sudoku: givens leave exactly one solution; verifier checks rules, not the stored grid", () => {
  for (const d of [1, 4, 5, 8, 9]) {
    for (const ex of generateExamples(sudokuTask, { n: 4, seed: 2, difficulty: d })) {
      const m = ex.meta as SudokuMeta;
      assert.equal(countSudokuSolutions(m.puzzle, m.size, 3), 1);
      assert.equal(m.puzzle.filter((v) => v === 0).length, [4, 6, 8, 10, 10, 14, 18, 22, 30][d - 1]);
      // Same grid, other layouts, no tags: last `size` lines holding digits.
      const rows = ex.answer.split("\n");
      assert.equal(sudokuTask.verify(`Here it is:\n${rows.map((r) => r.split("").join(" | ")).join("\n")}`, ex).correct, true);
      // A wrong grid: swap two cells in a row that were blanks or givens.
      const g = ex.answer.replace(/\n/g, "").split("").map(Number);
      [g[0], g[1]] = [g[1]!, g[0]!];
      assert.equal(sudokuTask.verify(`<answer>${g.join("")}</answer>`, ex).correct, false);
      assert.match(sudokuTask.verify(`<answer>${ex.answer.slice(0, -1)}</answer>`, ex).reason, /expected \d+ digits/);
    }
  }
  // A puzzle with two solutions: the verifier accepts both (it checks rules and givens).
  const puzzle = [0, 2, 0, 4, 0, 4, 0, 2, 2, 1, 4, 3, 4, 3, 2, 1];
  const meta: SudokuMeta = { size: 4, puzzle };
  assert.equal(countSudokuSolutions(puzzle, 4, 5), 2);
  assert.equal(verifySudoku("<answer>1234\n3412\n2143\n4321</answer>", meta).correct, true);
  assert.equal(verifySudoku("<answer>3214\n1432\n2143\n4321</answer>", meta).correct, true);
  assert.equal(verifySudoku("<answer>1214\n3432\n2143\n4321</answer>", meta).reason, "row 1 repeats a digit");
  assert.equal(verifySudoku("<answer>1234\n3412\n2143\n4312</answer>", meta).reason, "changes the given 2 at row 4, column 3");
});

test("jigsaw-compact: the same instances' pieces without the instruction; the same verifier", () => {
  for (const ex of generateExamples(compactJigsawTask, { n: 50, seed: 4, difficulty: 3 })) {
    assert.match(ex.prompt, /^A=\[[\d ]+\] B=\[[\d ]+\] C=\[[\d ]+\]$/);
    assert.equal(ex.task, "jigsaw-compact");
    assert.ok(compactJigsawTask.verify(ex.answer, ex).correct);
    assert.ok(!compactJigsawTask.verify([...ex.answer].reverse().join(""), ex).correct);
  }
});

test("jigsaw: order labels in any layout; wrong, repeated or missing labels fail", () => {
  const ex: Example = { id: "j", prompt: "", answer: "BAC", task: "jigsaw", meta: { pieces: [[14, 15], [9, 11, 12], [17]] } };
  for (const r of ["BAC", "B A C", "<answer>B, A, C</answer>", "The order is B -> A -> C", "so\nB A C\n"]) assert.equal(jigsawTask.verify(r, ex).correct, true, r);
  assert.equal(jigsawTask.verify("ABC", ex).reason, "the numbers do not increase in this order");
  assert.equal(jigsawTask.verify("BAB", ex).reason, 'a piece is used twice in "BAB"');
  assert.equal(jigsawTask.verify("BA", ex).reason, "expected 3 labels, got 2");
  assert.equal(jigsawTask.verify("BAD", ex).reason, 'unknown piece label in "BAD"');
  for (const e of generateExamples(jigsawTask, { n: 30, seed: 1, difficulty: 5 })) {
    const pieces = (e.meta as { pieces: number[][] }).pieces;
    assert.equal(pieces.length, 5);
    assert.equal(jigsawTask.verify([...e.answer].join(" "), e).correct, true);
    assert.equal(jigsawTask.verify([...e.answer].reverse().join(""), e).correct, false);
  }
});

test("graph: answers are recomputed from the graph; wrong answers fail", () => {
  const edges: [number, number, number][] = [[0, 1, 4], [1, 2, 1], [0, 2, 7], [2, 3, 2]];
  assert.equal(shortestPath(4, edges, 0, 3), 7);
  assert.equal(shortestPath(5, edges, 0, 4), Infinity);
  const sp: GraphMeta = { kind: "shortest-path", n: 4, edges, from: 0, to: 3 };
  assert.equal(verifyGraph("0->1->2->3 costs 4+1+2\n<answer>7</answer>", sp).correct, true);
  assert.equal(verifyGraph("<answer>9</answer>", sp).reason, "wrong length (expected 7)");
  const cyc: GraphMeta = { kind: "cycle", n: 4, edges };
  assert.equal(verifyGraph("<answer>Yes</answer>", cyc).correct, true);
  assert.equal(verifyGraph("<answer>no</answer>", cyc).correct, false);
  const con: GraphMeta = { kind: "connectivity", n: 5, edges, from: 3, to: 4 };
  assert.equal(verifyGraph("No, node 4 is isolated.", con).correct, true);
  assert.equal(verifyGraph("<answer>maybe</answer>", con).reason, "no yes/no found");
  const counts: Record<string, number> = {};
  for (const e of generateExamples(graphTask, { n: 300, seed: 4, difficulty: 6 })) {
    const m = e.meta as GraphMeta;
    counts[`${m.kind}:${m.kind === "shortest-path" ? "n" : e.answer}`] = (counts[`${m.kind}:${m.kind === "shortest-path" ? "n" : e.answer}`] ?? 0) + 1;
    if (m.kind === "shortest-path") assert.ok(Number.isFinite(Number(e.answer)) && Number(e.answer) > 0);
  }
  // Both answers occur often for the yes/no questions.
  for (const k of ["connectivity:yes", "connectivity:no", "cycle:yes", "cycle:no"]) assert.ok((counts[k] ?? 0) > 20, `${k}: ${counts[k]}`);
});

test("dates: calendar helpers and verifier formats", () => {
  assert.equal(weekdayOf(dayOf(2024, 2, 29)!), "Thursday");
  assert.equal(weekdayOf(dayOf(1700, 1, 1)!), "Friday");
  assert.equal(dayOf(2023, 2, 29), null);
  assert.equal(formatDay(dayOf(2000, 3, 1)! - 1), "2000-02-29");
  assert.equal(formatDay(dayOf(1900, 3, 1)! - 1), "1900-02-28");
  assert.equal(parseDate("It is March 5, 2017."), dayOf(2017, 3, 5));
  assert.equal(parseDate("5th Mar 2017"), dayOf(2017, 3, 5));
  assert.equal(parseDate("2017-02-30"), null);
  assert.equal(parseWeekday("from Monday it becomes tue."), "Tuesday");
  assert.equal(parseWeekday("this month"), null);
  const ex: Example = { id: "d", prompt: "", answer: "2017-04-28", task: "dates", meta: { kind: "date-offset", expected: "2017-04-28" } };
  assert.equal(datesTask.verify("<answer>April 28, 2017</answer>", ex).correct, true);
  assert.equal(datesTask.verify("<answer>2017-4-28</answer>", ex).correct, true);
  assert.equal(datesTask.verify("<answer>2017-04-29</answer>", ex).reason, "wrong date (expected 2017-04-28)");
  const wd: Example = { id: "w", prompt: "", answer: "Friday", task: "dates", meta: { kind: "day-of-week", expected: "Friday" } };
  assert.equal(datesTask.verify("It is a FRI", wd).correct, true);
  assert.equal(datesTask.verify("<answer>Thursday</answer>", wd).correct, false);
  // Generated answers agree with an independent computation via Date.
  for (const e of generateExamples(datesTask, { n: 100, seed: 8, difficulty: 5 })) {
    const m = /What day of the week is (\d{4})-(\d\d)-(\d\d)\?/.exec(e.prompt);
    if (m) {
      const jsDay = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!));
      if (+m[1]! >= 100) assert.equal(e.answer, ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"][jsDay.getUTCDay()]);
    }
    const o = /What date is (\d+) days? (before|after) (\d{4}-\d\d-\d\d)\?/.exec(e.prompt);
    if (o) {
      const base = Date.parse(o[3]! + "T00:00:00Z");
      const got = new Date(base + (o[2] === "after" ? 1 : -1) * Number(o[1]) * 86400000).toISOString().slice(0, 10);
      assert.equal(e.answer, got);
    }
  }
});
