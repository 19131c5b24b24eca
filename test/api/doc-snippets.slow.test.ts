/**
 * The TypeScript and JavaScript blocks of README.md and docs/*.md call the API as it is: each
 * block that imports rlvr is type-checked against the package's entries ("rlvr", "rlvr/<sub>",
 * mapped to their sources). Blocks are fragments — they use a `ctx`, `examples` or `table` the
 * prose defines — so names a block never declares are allowed (TS2304/TS2552/TS2448 "cannot find
 * name"; their uses are then `any`); every other
 * error (a wrong import, a wrong option, a wrong type) fails the test. (test/api/doc-imports.test.ts
 * checks the entries and names quickly; this runs the compiler.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

const root = join(import.meta.dirname, "..", "..");
const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => join("docs", f))];
/** Errors a fragment may have: a name the prose defines, not the block. */
const FRAGMENT = new Set([2304, 2552, 2448, 2454, 18004]);

test("doc code blocks that import rlvr type-check against its entries", { timeout: 600_000 }, () => {
  const dir = join(root, "test", "fixtures", `_doc-snippets-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const where = new Map<string, string>();
  try {
    for (const f of files) {
      let i = 0;
      for (const m of readFileSync(join(root, f), "utf8").matchAll(/^```(ts|typescript|js|javascript|mjs)\n([\s\S]*?)^```/gm)) {
        const code = m[2]!;
        if (!/from\s+["']rlvr(\/[a-z]+)?["']/.test(code)) continue;
        const name = join(dir, `${f.replace(/[/.]/g, "_")}_${i++}.${m[1]!.startsWith("t") ? "mts" : "mjs"}`);
        writeFileSync(name, `${code}\nexport {};\n`);
        where.set(name, `${f} block ${i}`);
      }
    }
    const cfg = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
    const options: ts.CompilerOptions = {
      ...cfg.options,
      allowJs: true,
      checkJs: true,
      noEmit: true,
      // Fragments: an undeclared name is `any` (no implicit-any complaints about its uses), and
      // no DOM library, so a `prompt` the prose defines is not window.prompt.
      noImplicitAny: false,
      lib: ["lib.es2023.d.ts"],
      baseUrl: root,
      paths: { rlvr: ["src/index.ts"], "rlvr/*": ["src/api/*.ts"] },
    };
    const program = ts.createProgram([...where.keys()], options);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && where.has(d.file.fileName) && !FRAGMENT.has(d.code))
      .map((d) => `${where.get(d.file!.fileName)} line ${d.file!.getLineAndCharacterOfPosition(d.start!).line + 1}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
    assert.ok(where.size >= 8, `only ${where.size} blocks import rlvr`);
    assert.deepEqual(problems, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
