/**
 * Every example config in examples/ loads and validates (the README points new users at them), and
 * names a task and a model the trainer can build.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { loadRunConfig } from "../../src/config/schema.ts";
// The method registry registers its config checks (registerConfigCheck) when loaded, as "rlvr" does.
import "../../src/methods/index.ts";

const dir = join(import.meta.dirname, "..", "..", "examples");
const files = readdirSync(dir).filter((f) => f.endsWith(".yaml"));

test("examples/ holds at least one config", () => assert.ok(files.length > 0));

for (const f of files) {
  test(`examples/${f} validates`, () => {
    const cfg = loadRunConfig(join(dir, f));
    assert.ok(cfg.data.task !== undefined || cfg.data.train !== undefined, "a task or a training file");
    if (cfg.rl) assert.ok(cfg.algorithm, "the algorithm resolves");
  });
}
