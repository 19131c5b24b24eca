/**
 * The public types name the one wrong field: compiles test/fixtures/types/config-typos.ts without
 * its @ts-expect-error markers and checks that every marked line gets exactly one error, naming
 * the field, and no other line gets any (a misplaced field used to add false "missing ropeTheta",
 * "missing onBadRow" errors from the parsed config's type). Events are discriminated by literal
 * stage names. (`tsc -p .` checks the fixture with its markers too.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

const fixture = join(import.meta.dirname, "..", "fixtures", "types", "config-typos.ts");

test("one mistake in a config object or an event check is one tsc error, naming it", { timeout: 300_000 }, () => {
  const lines = readFileSync(fixture, "utf8").split("\n");
  const expected = new Map<number, string>(); // 1-based line of the mistake → a word the error must name
  const stripped = lines.map((l, i) => {
    const m = /\/\/ @ts-expect-error (\S+)/.exec(l);
    if (!m) return l;
    expected.set(i + 2, m[1]!.replace(/[`:]/g, ""));
    return ""; // keep the line numbers
  });
  const tmp = join(import.meta.dirname, "..", "fixtures", "types", `_unmarked-${process.pid}.ts`);
  writeFileSync(tmp, stripped.join("\n"));
  try {
    const cfg = ts.getParsedCommandLineOfConfigFile(join(import.meta.dirname, "..", "..", "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
    const program = ts.createProgram([tmp], cfg.options);
    const diags = ts.getPreEmitDiagnostics(program).filter((d) => d.file?.fileName === tmp);
    const byLine = new Map<number, string[]>();
    for (const d of diags) {
      const line = d.file!.getLineAndCharacterOfPosition(d.start!).line + 1;
      byLine.set(line, [...(byLine.get(line) ?? []), ts.flattenDiagnosticMessageText(d.messageText, "\n")]);
    }
    for (const [line, word] of expected) {
      const msgs = byLine.get(line) ?? [];
      assert.equal(msgs.length, 1, `line ${line}: ${JSON.stringify(msgs)}`);
      assert.match(msgs[0]!, new RegExp(word === '"rl' ? "'\"rl \"'" : `'${word}'`), `line ${line}`);
    }
    const unexpected = [...byLine].filter(([l]) => !expected.has(l));
    assert.deepEqual(unexpected, [], "errors on lines without a mistake");
    assert.equal(expected.size, 4);
  } finally {
    rmSync(tmp, { force: true });
  }
});
