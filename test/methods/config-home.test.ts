/**
 * One config home for methods: every built-in method is enabled under `methods:` with the same
 * options, defaults and errors as under its old spelling (`guided:` / `labelfree:`, an alias), a
 * run trains the same either way, one method set in both places is an error naming the field, and
 * the resolved config (a run directory's config.yaml) reads back unchanged. config/ does not import
 * the methods: their checks are registered with it and still run at load (`rlvr train`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { parse as parseYaml } from "yaml";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";

const base = (out: string, extra: Record<string, unknown> = {}): RunConfigInput => ({
  seed: 4,
  out,
  model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
  tokenizer: { type: "char", alphabet: "0123456789,>" },
  data: { task: "maximum", difficulty: 3, trainSize: 32, testSize: 4 },
  rl: { steps: 2, promptsPerStep: 4, groupSize: 4, maxNewTokens: 2, lr: 1e-3 },
  eval: { maxNewTokens: 2 },
  ...extra,
});

// Each built-in block under its old home and its key under methods:.
const BLOCKS: [string, string, Record<string, unknown>][] = [
  ["guided", "raft", { threshold: 0 }],
  ["guided", "relift", { hardness: 1, batchSize: 2 }],
  ["guided", "expert", { mode: "chord", batchSize: 4 }],
  ["guided", "kd", { teacher: "/teacher", coef: 0.1 }],
  ["labelfree", "ttrl", { trainOn: 2 }],
  ["labelfree", "ear", { alpha: 1 }],
  ["labelfree", "evol", {}],
  ["labelfree", "selfPlay", { kind: "arithmetic", proposals: 8, solverGroup: 4, maxItems: 3 }],
];
const noKl = { rl: { steps: 2, promptsPerStep: 4, groupSize: 4, maxNewTokens: 2, algorithm: { preset: "grpo", kl: { coef: 0 } } } };

test("every built-in method parses to the same config under methods: as under guided:/labelfree:", () => {
  for (const [alias, key, opts] of BLOCKS) {
    const extra = key === "kd" ? noKl : {};
    const old = parseRunConfig(base("x", { ...extra, [alias]: { [key]: opts } }));
    const now = parseRunConfig(base("x", { ...extra, methods: { [key]: opts } }));
    assert.deepEqual(now, old, `${alias}.${key} = methods.${key}`);
    assert.ok(now.methods?.[key as "raft"], `methods.${key} is set, defaults filled`);
    assert.equal((now as Record<string, unknown>)[alias], undefined, `no ${alias} key after parse`);
  }
});

test("a method set both under methods: and its old spelling is an error naming the field", () => {
  assert.throws(() => parseRunConfig(base("x", { guided: { raft: {} }, methods: { raft: { threshold: 1 } } })), /^ConfigError: config error in config at guided\.raft: method "raft" is configured twice, here and at methods\.raft; keep one/);
  assert.throws(() => parseRunConfig(base("x", { labelfree: { ttrl: {} }, methods: { ttrl: {} } })), /at labelfree\.ttrl: method "ttrl" is configured twice/);
  // Different methods in the two places combine.
  const c = parseRunConfig(base("x", { labelfree: { ttrl: {} }, methods: { ear: {} } }));
  assert.ok(c.methods?.ttrl && c.methods.ear);
});

test("unknown options and keys name the field as written", () => {
  assert.throws(() => parseRunConfig(base("x", { methods: { raft: { thresold: 1 } } })), /^ConfigError: config error in config at methods\.raft: unknown field\(s\) thresold; did you mean threshold\?/);
  assert.throws(() => parseRunConfig(base("x", { guided: { raft: { thresold: 1 } } })), /^ConfigError: config error in config at guided\.raft: unknown field\(s\) thresold; did you mean threshold\?/);
  assert.throws(() => parseRunConfig(base("x", { methods: { relift: { source: "teacher" } } })), /at methods\.relift\.teacher: source: teacher needs methods\.relift\.teacher/);
  assert.throws(() => parseRunConfig(base("x", { guided: { relift: { source: "teacher" } } })), /at guided\.relift\.teacher: source: teacher needs guided\.relift\.teacher/);
  // Method names that are not a key of methods: (LUFFY and CHORD are methods.expert's modes).
  assert.throws(() => parseRunConfig(base("x", { methods: { luffy: {} } })), /at methods\.luffy: no method "luffy" is registered/);
  assert.throws(() => parseRunConfig(base("x", { guided: { ttrl: {} } })), /^ConfigError: config error in config at guided\.ttrl: unknown field; guided: holds raft, relift, expert, kd$/);
  assert.throws(() => parseRunConfig(base("x", { methods: { raft: {}, expert: { mode: "luffy" } } })), /at methods\.raft: methods\.raft trains with its own loss/);
  // Checks against the rest of the config (the method registry's) name methods.<key> too.
  assert.throws(() => parseRunConfig(base("x", { rl: { steps: 1, groupSize: 1, algorithm: "reinforce_pp" }, methods: { ttrl: {} } })), /at methods\.ttrl: ttrl compares several responses per prompt/);
});

test("the resolved config (config.yaml) reads back the same, and a run trains the same from either home", { timeout: 120_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), "rlvr-config-home-"));
  try {
    const rows = async (name: string, extra: Record<string, unknown>) => {
      const out = join(root, name);
      const cfg = parseRunConfig(base(out, extra));
      await train(cfg, { quiet: true });
      const written = parseYaml(readFileSync(join(out, "config.yaml"), "utf8")) as Record<string, unknown>;
      assert.deepEqual(Object.keys(written).filter((k) => k === "guided" || k === "labelfree"), [], "written with methods:");
      assert.deepEqual(parseRunConfig(written, "config.yaml").methods, cfg.methods, "config.yaml's methods read back the same");
      const ms = readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
      return ms.filter((r) => r["stage"] === "rl").map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !/time|sec|_ms$|tokens_per/.test(k))));
    };
    const old = await rows("old", { labelfree: { ttrl: { trainOn: 2 }, ear: { alpha: 1 } } });
    const now = await rows("new", { methods: { ttrl: { trainOn: 2 }, ear: { alpha: 1 } } });
    assert.equal(now.length, 2);
    assert.ok(now.every((r) => typeof r["ttrl/label_acc"] === "number"), "TTRL ran");
    assert.deepEqual(now, old);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const node = (args: string[]) => spawnSync(process.execPath, args, { cwd: repo, encoding: "utf8", env: { ...process.env, RLVR_FROM_SOURCE: "1", RLVR_ENGINE_PROBE: "off", RLVR_THREADS: "1" } });

test("`rlvr train` reports a method's config error at load, one line naming the field", { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-config-home-cli-"));
  try {
    const file = join(dir, "bad.yaml");
    writeFileSync(file, stringify(base(join(dir, "run"), { rl: { steps: 1, groupSize: 1, algorithm: "reinforce_pp" }, methods: { ttrl: {} } })));
    const r = node([join(repo, "bin", "rlvr.js"), "train", file]);
    assert.notEqual(r.status, 0);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /config error in .*bad\.yaml at methods\.ttrl: ttrl compares several responses per prompt; set rl\.groupSize >= 2/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("config/ alone (no method registry loaded) refuses a config that enables methods instead of skipping their checks", { timeout: 60_000 }, () => {
  const script = `import { parseRunConfig } from "./src/config/schema.ts";
try { parseRunConfig(${JSON.stringify(base("x", { methods: { ttrl: {} } }))}); console.log("parsed"); } catch (e) { console.log(e.message); }`;
  const r = node(["--import", "tsx", "--input-type=module", "-e", script]);
  assert.match(r.stdout, /^config error in config at methods: the method registry is not loaded, so the methods cannot be checked; import "rlvr"/, r.stderr);
});
