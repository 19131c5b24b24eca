/**
 * Exact text of config errors: each names the file, the field (dotted path), what was expected,
 * and what was found (DESIGN.md: "every error names the field and the fix").
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadRunConfig, parseRunConfig } from "../../src/config/schema.ts";
// The method registry registers its config checks (registerConfigCheck) when loaded, as "rlvr" does.
import "../../src/methods/index.ts";

const base = { model: { init: {} }, tokenizer: { type: "char", alphabet: "0123456789+=" }, data: { task: "addition" } };

/** The message parseRunConfig throws for `raw` (named "run.yaml"). */
function message(raw: unknown): string {
  try {
    parseRunConfig(raw, "run.yaml");
  } catch (e) {
    assert.ok(e instanceof ConfigError, `a ConfigError, got ${(e as Error).name}`);
    return (e as Error).message;
  }
  assert.fail("no error");
}

test("wrong type, out of range and non-integer rl.groupSize", () => {
  assert.equal(message({ ...base, rl: { steps: 1, groupSize: "8" } }), 'config error in run.yaml at rl.groupSize: Invalid input: expected number, received string, got "8"');
  assert.equal(message({ ...base, rl: { steps: 1, groupSize: 0 } }), "config error in run.yaml at rl.groupSize: Too small: expected number to be >0, got 0");
  assert.equal(message({ ...base, rl: { steps: 1, groupSize: 2.5 } }), "config error in run.yaml at rl.groupSize: Invalid input: expected int, received number, got 2.5");
});

test("rl.groupSize 1: only with a batch-normalised advantage (REINFORCE++) and no group-based feature", () => {
  assert.equal(
    message({ ...base, rl: { steps: 1, groupSize: 1 } }),
    'config error in run.yaml at rl.groupSize: 1 response per prompt needs an advantage that normalises over the batch (reinforce_pp, e.g. rl.algorithm: reinforce_pp); "grpo" compares responses within a prompt\'s group, which a group of 1 does not have. Set rl.groupSize >= 2 or change the algorithm',
  );
  assert.equal(parseRunConfig({ ...base, rl: { steps: 1, groupSize: 1, algorithm: "reinforce_pp" } }).rl!.groupSize, 1);
  const rpp = { steps: 1, groupSize: 1, algorithm: "reinforce_pp" };
  assert.match(message({ ...base, rl: { ...rpp, dynamicSampling: {} } }), /^config error in run\.yaml at rl\.dynamicSampling: dynamic sampling drops groups/);
  assert.match(message({ ...base, rl: { ...rpp, difficultyFilter: {} } }), /^config error in run\.yaml at rl\.difficultyFilter: /);
  assert.match(message({ ...base, rl: { ...rpp, tree: {} } }), /^config error in run\.yaml at rl\.tree: /);
  assert.match(message({ ...base, rl: rpp, labelfree: { ttrl: {} } }), /^config error in run\.yaml at labelfree\.ttrl: ttrl compares several responses per prompt; set rl\.groupSize >= 2/);
  assert.match(message({ ...base, rl: rpp, labelfree: { selfPlay: {} } }), /^config error in run\.yaml at labelfree\.selfPlay: /);
  assert.match(message({ ...base, rl: { steps: 1, algorithm: "reinforce_pp" }, labelfree: { selfPlay: {} } }), /^config error in run\.yaml at labelfree\.selfPlay: selfplay uses sequence advantages; "reinforce_pp" gives per-token advantages/);
  // EAR reshapes sequence advantages; REINFORCE++'s are per token (any group size).
  assert.match(message({ ...base, rl: { steps: 1, algorithm: "reinforce_pp" }, labelfree: { ttrl: {}, ear: {} } }), /^config error in run\.yaml at labelfree\.ear: ear uses sequence advantages; "reinforce_pp" gives per-token advantages/);
});

test("unknown fields, nested and top level", () => {
  assert.equal(message({ ...base, rl: { steps: 1, gropSize: 4 } }), "config error in run.yaml at rl: unknown field(s) gropSize; did you mean groupSize?");
  assert.equal(message({ ...base, lerning_rate: 1 }), "config error in run.yaml at (top level): unknown field(s) lerning_rate; remove or rename them");
});

test("missing choices, enum values, numbers out of range; several problems listed together", () => {
  assert.equal(message({ ...base, model: {} }), "config error in run.yaml at model: set model.path (a checkpoint directory) or model.init (a random model's size), got {}");
  assert.equal(message({ ...base, data: {} }), "config error in run.yaml at data: set data.task (a procedural task) or data.train (a JSONL/Parquet file), got {}");
  assert.equal(message({ ...base, data: { task: "addition", template: "chatml" } }), 'config error in run.yaml at data.template: Invalid option: expected one of "plain"|"r1"|"boxed", got "chatml"');
  assert.equal(message({ ...base, rl: { steps: 1, lr: -1 } }), "config error in run.yaml at rl.lr: Too small: expected number to be >0, got -1");
  assert.equal(
    message({ ...base, rl: { steps: 1, lr: -1, groupSize: 0 } }),
    ["config error in run.yaml at rl.groupSize: Too small: expected number to be >0, got 0", "config error in run.yaml at rl.lr: Too small: expected number to be >0, got -1"].join("\n"),
  );
});

test("algorithm errors name the field inside rl.algorithm", () => {
  assert.match(message({ ...base, rl: { steps: 1, algorithm: "grpoo" } }), /at rl\.algorithm\.preset: unknown preset "grpoo"; expected one of grpo, dr_grpo, dapo, gspo, cispo, sapo, rloo, reinforce_pp$/);
  assert.match(message({ ...base, rl: { steps: 1, algorithm: { loss: { clipHigh: "0.28x" } } } }), /at rl\.algorithm\.loss\.clipHigh: Invalid input: expected number, received string \(got "0\.28x"\)$/);
});

test("invalid YAML names the file and line", () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-cfg-"));
  try {
    const tabs = join(dir, "tabs.yaml");
    writeFileSync(tabs, "seed: 1\nmodel:\n\tinit: {}\n");
    assert.throws(() => loadRunConfig(tabs), { name: "ConfigError", message: `config error in ${tabs} line 3: invalid YAML (Tabs are not allowed as indentation at line 3, column 1:)` });
    const flow = join(dir, "flow.yaml");
    writeFileSync(flow, "seed: 1\nrl:\n  steps: [1, 2\n");
    assert.throws(() => loadRunConfig(flow), { message: `config error in ${flow} line 4: invalid YAML (Flow sequence in block collection must be sufficiently indented and end with a ] at line 4, column 1:)` });
    const typed = join(dir, "typed.yaml");
    writeFileSync(typed, "model:\n  init: {}\ntokenizer: {type: char, alphabet: '0123456789'}\ndata:\n  task: addition\nrl:\n  steps: 1\n  groupSize: eight\n");
    assert.throws(() => loadRunConfig(typed), { message: `config error in ${typed} at rl.groupSize: Invalid input: expected number, received string, got "eight"` });
    const missing = join(dir, "missing.yaml");
    assert.throws(() => loadRunConfig(missing), { message: `cannot read config ${missing}: ENOENT: no such file or directory, open '${missing}'` });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Messages that tell the fix (todo tests until the messages were improved).
test("no doubled 'config error' prefix on algorithm errors", () => {
  assert.equal(message({ ...base, rl: { steps: 1, algorithm: "grpoo" } }), 'config error in run.yaml at rl.algorithm.preset: unknown preset "grpoo"; expected one of grpo, dr_grpo, dapo, gspo, cispo, sapo, rloo, reinforce_pp');
});

test("an unknown field suggests the nearest known one", () => {
  assert.match(message({ ...base, rl: { steps: 1, gropSize: 4 } }), /did you mean groupSize\?/);
});

test("a missing block says it is missing and how to fill it", () => {
  assert.match(message({ data: { task: "addition" } }), /^config error in run\.yaml at model: missing; set model\.path .* or model\.init/);
});

test("a tokenizer block names the missing field", () => {
  assert.match(message({ ...base, tokenizer: { type: "char" } }), /tokenizer\.alphabet/);
});
