/**
 * Every code block of README.md and docs/*.md imports rlvr the way a user of the installed package
 * can: "rlvr" or a subpath the package exports (package.json "exports"), never "./src/…" or
 * "rlvr/src/…"; and every value it imports by name is exported there. (The entries resolve to
 * their sources here: dist/api/x.js ← src/api/x.ts.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = join(import.meta.dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, { import?: string } | string> };
const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => join("docs", f))];

/** `import {a, type B, c as d} from "x"` statements of the ts/js code blocks of a markdown file. */
function imports(md: string): { names: string[]; from: string; line: string }[] {
  const out: { names: string[]; from: string; line: string }[] = [];
  for (const block of md.matchAll(/^```(?:ts|typescript|js|javascript|mjs|mts)\n([\s\S]*?)^```/gm)) {
    for (const m of block[1]!.matchAll(/^import\s+(?:type\s+)?([\s\S]*?)\s+from\s+["']([^"']+)["']/gm)) {
      const braced = /\{([\s\S]*)\}/.exec(m[1]!);
      const names = braced ? braced[1]!.split(",").map((s) => s.trim()).filter((s) => s && !s.startsWith("type ")).map((s) => s.split(/\s+as\s+/)[0]!) : [];
      out.push({ names: m[0]!.startsWith("import type") ? [] : names, from: m[2]!, line: m[0]! });
    }
  }
  return out;
}

/** The source module of a package entry ("rlvr", "rlvr/rewards"), or null when the package does not export it. */
function entrySource(spec: string): string | null {
  const e = pkg.exports[spec === "rlvr" ? "." : `./${spec.slice("rlvr/".length)}`];
  const target = typeof e === "string" ? e : e?.import;
  if (!target) return null;
  return join(root, target.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts"));
}

test("doc snippets import only from the package's public entries, and the names exist", async () => {
  const problems: string[] = [];
  let checked = 0;
  for (const f of files) {
    for (const imp of imports(readFileSync(join(root, f), "utf8"))) {
      if (imp.from.startsWith(".") || imp.from.startsWith("/") || imp.from.startsWith("rlvr/src")) {
        problems.push(`${f}: ${imp.line} — import from "rlvr" or a subpath (rlvr/rewards, rlvr/tasks, …), as an installed package can`);
        continue;
      }
      if (imp.from !== "rlvr" && !imp.from.startsWith("rlvr/")) continue; // another package (zod, openai)
      const src = entrySource(imp.from);
      if (!src) {
        problems.push(`${f}: "${imp.from}" is not an entry the package exports (${Object.keys(pkg.exports).join(", ")})`);
        continue;
      }
      const mod = (await import(pathToFileURL(src).href)) as Record<string, unknown>;
      for (const n of imp.names) if (!(n in mod)) problems.push(`${f}: ${n} is not exported by "${imp.from}"`);
      checked++;
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked >= 15, `only ${checked} imports checked`);
});
