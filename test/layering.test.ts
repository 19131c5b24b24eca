/**
 * The layering of src/ (docs/architecture.md): each folder imports only from its own layer and the
 * layers below it, type-only imports included, and no module is part of an import circle. The rules
 * live in .dependency-cruiser.cjs; dependency-cruiser checks them (`npx depcruise src` runs the same
 * check by hand). Each violation prints as one line: `rule: from → to`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { cruise, type ICruiseResult } from "dependency-cruiser";

const root = join(import.meta.dirname, "..");
const rules = createRequire(import.meta.url)(join(root, ".dependency-cruiser.cjs")) as {
  forbidden: { name: string; from: { path?: string } }[];
  options: object;
};

test("src/ imports only downward and has no import circle", async () => {
  const cwd = process.cwd();
  process.chdir(root); // dependency-cruiser reports paths relative to the working directory
  let result: ICruiseResult;
  try {
    const out = await cruise(["src"], { ...rules.options, validate: true, ruleSet: rules as never });
    result = out.output as ICruiseResult;
  } finally {
    process.chdir(cwd);
  }
  const lines = result.summary.violations
    .filter((v) => v.rule.severity === "error")
    .map((v) => `${v.rule.name}: ${v.cycle?.length ? [v.from, ...v.cycle.map((c) => c.name)].join(" → ") : `${v.from} → ${v.to}`}`);
  assert.ok(result.summary.totalCruised > 100, `cruised only ${result.summary.totalCruised} modules`);
  assert.deepEqual(lines, [], `${lines.length} layering violation(s) (rules: .dependency-cruiser.cjs, order: docs/architecture.md):\n${lines.join("\n")}`);
});

test("every folder of src/ has a layer", () => {
  const listed = rules.forbidden.find((r) => r.name === "unlayered-folder")!.from;
  const folders = readdirSync(join(root, "src"), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  const pattern = new RegExp((listed as { pathNot: string }).pathNot);
  assert.deepEqual(folders.filter((f) => !pattern.test(`src/${f}/`)), []);
});
