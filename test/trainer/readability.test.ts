/**
 * The trainer stays readable: no function in src/trainer/ or src/pipeline/ is longer than 80
 * lines (the RL step used to be one 250-line function), and the RL step reads as its stage list.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

const root = new URL("../../", import.meta.url).pathname;

/** Every function (declaration, method, arrow, expression) of `file` longer than `max` lines. */
function longFunctions(file: string, max: number): string[] {
  const src = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isConstructorDeclaration(n)) && n.body) {
      const a = src.getLineAndCharacterOfPosition(n.getStart()).line;
      const b = src.getLineAndCharacterOfPosition(n.getEnd()).line;
      if (b - a + 1 > max) out.push(`${file.slice(root.length)}:${a + 1} (${b - a + 1} lines)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

test("no function in src/trainer/ or src/pipeline/ is over 80 lines", () => {
  const files = ["src/trainer", "src/pipeline"].flatMap((d) => readdirSync(join(root, d)).filter((f) => f.endsWith(".ts")).map((f) => join(root, d, f)));
  assert.ok(files.length >= 10, "found the trainer's files");
  assert.deepEqual(files.flatMap((f) => longFunctions(f, 80)), []);
});

test("the measure finds long functions (so the check above can fail)", () => {
  const long = join(root, "test/trainer/readability.test.ts");
  assert.ok(longFunctions(long, 5).length > 0);
});

test("rlStep names its stages in order: collect → update (reward → reference → advantages → optimize) → metrics", () => {
  const inOrder = (file: string, fn: string, calls: string[]) => {
    const text = readFileSync(join(root, file), "utf8");
    const body = text.slice(text.indexOf(fn));
    const at = calls.map((s) => body.indexOf(s));
    assert.ok(at.every((i) => i > 0), `${fn}: every stage is called: ${at}`);
    assert.deepEqual([...at].sort((a, b) => a - b), at, `${fn}: in pipeline order`);
  };
  inOrder("src/pipeline/step.ts", "export async function rlStep", ["collect(", "update(", "metrics("]);
  inOrder("src/pipeline/update.ts", "export async function update", ["reward(", "reference(", "advantages(", "optimizeBatch(", "updateMetrics("]);
});
