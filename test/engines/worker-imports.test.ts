/**
 * The torch worker's Python package (python/rlvr_worker) has no import circle and no module takes
 * a private name (`_x`) from another: helpers/worker_imports.py reads every import with `ast`
 * (the lazy ones inside functions too). Controls: a package with a lazy circle and one with a
 * cross-file private import must fail, naming the files; a clean one passes. Standard-library
 * Python only (no torch), well under a second. ORDER is the package's layer order (docs/engines.md):
 * each listed module imports only modules listed before it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const script = join(import.meta.dirname, "helpers", "worker_imports.py");
const python = process.env.RLVR_TEST_PYTHON ?? "python3";

const ORDER = ["__init__", "protocol", "options", "weights", "scoring", "sampling", "worker", "distributed", "commands", "vllm_ext", "vllm_colocated", "ops", "__main__"];

function check(dir: string, order: string[] = []): { status: number | null; out: string } {
  const r = spawnSync(python, [script, dir, ...(order.length ? [order.join(",")] : [])], { encoding: "utf8" });
  assert.equal(r.error, undefined, `cannot run ${python}: ${r.error?.message}`);
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function pkg(files: Record<string, string>): string {
  const dir = join(mkdtempSync(join(tmpdir(), "rlvr-imports-")), "pkg");
  mkdirSync(dir);
  for (const [name, text] of Object.entries({ "__init__.py": "", ...files })) writeFileSync(join(dir, name), text);
  return dir;
}

test("python/rlvr_worker: no import circle, no private name across files, imports only down the layer order", () => {
  const r = check(join(import.meta.dirname, "..", "..", "python", "rlvr_worker"), ORDER);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /^ok: \d+ modules/);
});

test("the check fails on a lazy circle, a private import and an upward import, and passes a clean package", () => {
  const dirs = [
    pkg({ "a.py": "from .b import f\n", "b.py": "def f():\n    from .a import g\n" }),
    pkg({ "a.py": "from .b import _hidden, shown\n", "b.py": "_hidden = 1\nshown = 2\n", "c.py": "from . import b\nx = b._hidden\n" }),
    pkg({ "a.py": "from .b import shown\nfrom . import __version__\n", "b.py": "shown = 1\n", "c.py": "from . import a, b\n" }),
  ];
  try {
    const circle = check(dirs[0]!);
    assert.equal(circle.status, 1, circle.out);
    assert.match(circle.out, /import circle a\.py -> b\.py -> a\.py/);
    const priv = check(dirs[1]!);
    assert.equal(priv.status, 1, priv.out);
    assert.match(priv.out, /a\.py:1: imports private name _hidden from b\.py/);
    assert.match(priv.out, /c\.py:2: uses private name b\._hidden/);
    const upward = check(dirs[2]!, ["b", "c", "a"]);
    assert.equal(upward.status, 1, upward.out);
    assert.match(upward.out, /pkg\/c\.py imports a\.py, which comes after it in the layer order/);
    const clean = check(dirs[2]!, ["b", "a", "c"]);
    assert.equal(clean.status, 0, clean.out);
  } finally {
    for (const d of dirs) rmSync(join(d, ".."), { recursive: true, force: true });
  }
});
