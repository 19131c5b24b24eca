// README.md's "Use it from TypeScript" example, run as written (its `from "rlvr"` pointed at
// src/index.ts), in an empty folder: it must run, and the model it trains must learn.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

/** The first ```ts block after the heading `## Use it from TypeScript`. */
export function readmeExample(text: string): string {
  const at = text.indexOf("## Use it from TypeScript");
  assert.ok(at >= 0, 'README.md has no "## Use it from TypeScript" section');
  const m = /```ts\n([\s\S]*?)```/.exec(text.slice(at));
  assert.ok(m, "the section has no ```ts code block");
  return m[1]!;
}

test("README's TypeScript example is short and imports the package by name", () => {
  const code = readmeExample(readme);
  assert.match(code, /from "rlvr";/);
  const lines = code.trim().split("\n").length;
  assert.ok(lines <= 25, `the example has ${lines} lines`);
});

test("README's example is plain JavaScript too (the README says it needs no TypeScript loader)", () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-readme-js-"));
  try {
    writeFileSync(join(dir, "example.mjs"), readmeExample(readme));
    const r = spawnSync(process.execPath, ["--check", join(dir, "example.mjs")], { encoding: "utf8" });
    assert.equal(r.status, 0, `not valid JavaScript (a TypeScript-only construct such as \`x!\` or a type annotation?):\n${r.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("README's TypeScript example trains and raises held-out accuracy", { timeout: 600_000 }, () => {
  const src = new URL("../../src/index.ts", import.meta.url).href;
  const code = readmeExample(readme).replace('from "rlvr";', `from ${JSON.stringify(src)};`);
  const dir = mkdtempSync(join(tmpdir(), "rlvr-readme-"));
  try {
    writeFileSync(join(dir, "example.mts"), code);
    const r = spawnSync(process.execPath, ["--import", import.meta.resolve("tsx"), "example.mts"], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, RLVR_THREADS: "1" },
    });
    assert.equal(r.status, 0, `the example failed:\n${r.stderr}`);
    const m = /held-out accuracy ([\d.]+) → ([\d.]+)/.exec(r.stdout);
    assert.ok(m, `no accuracy line in:\n${r.stdout}`);
    const [before, after] = [Number(m[1]), Number(m[2])];
    process.stderr.write(`README example: held-out accuracy ${before} -> ${after}\n`);
    assert.ok(after >= before + 0.3, `held-out accuracy rose by ${(after - before).toFixed(3)} (need >= 0.3)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
