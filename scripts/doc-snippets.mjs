#!/usr/bin/env node
// Type-check the TypeScript/JavaScript blocks of README.md and docs/*.md that import rlvr, as a
// user's project sees the package:
//   node scripts/doc-snippets.mjs              # in a project with rlvr (the packed tarball) and typescript installed
//   node scripts/doc-snippets.mjs --sources    # in the repository: "rlvr" and "rlvr/<sub>" mapped to src/
// Blocks are fragments (they use a `ctx`, `examples` or `table` the prose defines), so a name a
// block never declares is allowed (and is `any`); any other error — a wrong import, option or
// type — is printed as "<file> block <n> line <l>: TS<code> <message>" and the exit status is 1.
// .ci/run runs it against the tarball; test/api/doc-snippets.slow.test.ts against the sources.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Errors a fragment may have: a name the prose defines, not the block. */
const FRAGMENT = new Set([2304, 2552, 2448, 2454, 18004]);

/** Every block of README.md and docs/*.md that imports rlvr: {where, code, js}. */
export function docBlocks(root = repo) {
  const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => join("docs", f))];
  const out = [];
  for (const f of files) {
    let i = 0;
    for (const m of readFileSync(join(root, f), "utf8").matchAll(/^```(ts|typescript|js|javascript|mjs)\n([\s\S]*?)^```/gm)) {
      if (!/from\s+["']rlvr(\/[a-z]+)?["']/.test(m[2])) continue;
      out.push({ where: `${f} block ${++i}`, code: m[2], js: !m[1].startsWith("t") });
    }
  }
  return out;
}

/**
 * Type-check the doc blocks in `cwd` (written to `<cwd>/.doc-snippets/`, removed after).
 * @returns {{blocks: number, problems: string[]}}
 */
export function checkDocSnippets({ cwd = process.cwd(), sources = false, root = repo } = {}) {
  const ts = createRequire(join(cwd, "package.json"))("typescript");
  const dir = join(cwd, ".doc-snippets");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const where = new Map();
  try {
    docBlocks(root).forEach((b, k) => {
      const name = join(dir, `block${k}.${b.js ? "mjs" : "mts"}`);
      writeFileSync(name, `${b.code}\nexport {};\n`);
      where.set(name, b.where);
    });
    const options = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      // Fragments: an undeclared name is `any`, and no DOM library (a `prompt` the prose defines is not window.prompt).
      noImplicitAny: false,
      lib: ["lib.es2023.d.ts"],
      types: ["node"],
      allowJs: true,
      checkJs: true,
      skipLibCheck: true,
      noEmit: true,
      ...(sources ? { baseUrl: root, paths: { rlvr: ["src/index.ts"], "rlvr/*": ["src/api/*.ts"] }, allowImportingTsExtensions: true } : {}),
    };
    const program = ts.createProgram([...where.keys()], options);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && where.has(d.file.fileName) && !FRAGMENT.has(d.code))
      .map((d) => `${where.get(d.file.fileName)} line ${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
    return { blocks: where.size, problems };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { blocks, problems } = checkDocSnippets({ sources: process.argv.includes("--sources") });
  for (const p of problems) process.stderr.write(p + "\n");
  process.stdout.write(`doc snippets: ${blocks} blocks that import rlvr, ${problems.length} problem(s)\n`);
  process.exit(problems.length || blocks === 0 ? 1 : 0);
}
