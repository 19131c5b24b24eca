/**
 * Functions a reader holds in one screen (issue 29's acceptance): no function in src/pipeline/,
 * src/trainer/ or src/methods/ is
 * over 80 lines. Measured with the TypeScript compiler's parser:
 * function declarations, methods (classes and object literals), accessors, and function or arrow
 * expressions bound to a name (a variable or a property); the length is the lines the body spans,
 * from its opening to its closing line. Nested functions count inside their parent too.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const ROOT = join(import.meta.dirname, "..");
/** The step, the run and the methods. */
const DIRS = ["src/pipeline", "src/trainer", "src/methods"];
const MAX_LINES = 80;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** The name a function-like node is known by, or undefined for an anonymous one (a callback). */
function nameOf(n: ts.Node): string | undefined {
  if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isGetAccessorDeclaration(n) || ts.isSetAccessorDeclaration(n)) && n.name) return n.name.getText();
  if (ts.isConstructorDeclaration(n)) return "constructor";
  if (ts.isArrowFunction(n) || ts.isFunctionExpression(n)) {
    const p = n.parent;
    if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.initializer === n) return p.name.getText();
  }
  return undefined;
}

/** Each named function in `file` with its body's line count, as `file:line name (N lines)`. */
export function functionLengths(file: string): { where: string; lines: number }[] {
  const src = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const out: { where: string; lines: number }[] = [];
  const visit = (n: ts.Node): void => {
    const name = nameOf(n);
    const body = (n as ts.FunctionLikeDeclarationBase).body;
    if (name !== undefined && body) {
      const first = src.getLineAndCharacterOfPosition(body.getStart(src)).line;
      const last = src.getLineAndCharacterOfPosition(body.getEnd()).line;
      const at = src.getLineAndCharacterOfPosition(n.getStart(src)).line + 1;
      out.push({ where: `${relative(ROOT, file)}:${at} ${name}`, lines: last - first + 1 });
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

test("the measure counts a named function's body lines and skips anonymous callbacks", () => {
  const fns = functionLengths(join(ROOT, "src/methods/define.ts"));
  const define = fns.find((f) => / defineMethod$/.test(f.where));
  assert.ok(define && define.lines > 10 && define.lines < 40, `defineMethod measured ${define?.lines}`);
  assert.ok(fns.some((f) => / build$/.test(f.where)), "the arrow function bound to the property build is measured");
});

test(`no function in ${DIRS.join(", ")} is over ${MAX_LINES} lines`, () => {
  const long = DIRS.flatMap((d) => tsFiles(join(ROOT, d))).flatMap(functionLengths).filter((f) => f.lines > MAX_LINES);
  assert.deepEqual(long.map((f) => `${f.where} (${f.lines} lines)`), [], `split these into named helpers:\n${long.map((f) => `  ${f.where} (${f.lines} lines)`).join("\n")}`);
});
