/**
 * Every command that resolves a name honours plugins: `rlvr train` (plugins: and --plugin),
 * `rlvr eval <run>` on a run whose reward and task come from a plugin (it loads the run's plugins,
 * and without --task/--data evaluates the run's own held-out set with the run's reward, giving
 * the run's own logged number), `rlvr data gen --plugin`, `rlvr verify --plugin`; an unknown
 * name gets "did you mean". (Slow: a dozen CLI processes; the in-process parts are in
 * test/cli/eval-run-defaults.test.ts.)
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";

const root = mkdtempSync(join(tmpdir(), "rlvr-plugin-cmds-"));
after(() => rmSync(root, { recursive: true, force: true }));

function rlvr(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [join(import.meta.dirname, "../../bin/rlvr.js"), ...args], {
    cwd: root,
    input,
    encoding: "utf8",
    env: { ...process.env, RLVR_FROM_SOURCE: "1", RLVR_ENGINE_PROBE: "off" },
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.split("\n").filter((l) => l.trim() !== "" && !/npm warn/.test(l)).join("\n") };
}

// A plugin as a user writes it: a task (the larger of two digits) and a reward of their own.
writeFileSync(
  join(root, "plugin.mjs"),
  `import { defineReward, defineTask } from "rlvr";
defineTask({ name: "plugin-max2", sample: (rng) => { const a = rng.int(0, 9), b = rng.int(0, 9); return { prompt: a + "," + b + ">", answer: String(Math.max(a, b)) }; }, verify: (r, ex) => r.trim() === ex.answer });
defineReward({ name: "plugin-first-char", score: (r, ex) => (r.trim()[0] === ex.answer ? 1 : 0) });
`,
);
const config = (out: string, plugins: string[]) => ({
  seed: 4,
  out,
  ...(plugins.length ? { plugins } : {}),
  model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
  tokenizer: { type: "char", alphabet: "0123456789,>" },
  data: { task: "plugin-max2", trainSize: 64, testSize: 12 },
  reward: { verifier: "plugin-first-char" },
  sft: { steps: 8, batchSize: 16 },
  rl: { steps: 2, promptsPerStep: 2, groupSize: 2, maxNewTokens: 2 },
  eval: { maxNewTokens: 2 },
});

test("train and eval a run whose task and reward come from a plugin", { timeout: 300_000 }, () => {
  writeFileSync(join(root, "run.yaml"), stringify(config("runs/a", ["./plugin.mjs"])));
  const t = rlvr(["train", "run.yaml"]);
  assert.equal(t.code, 0, t.stderr);
  const logged = readFileSync(join(root, "runs/a/eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).find((l) => l.label === "rl");

  // No --task/--data: the run's held-out set and reward, through the run's plugins.
  const e = rlvr(["eval", "runs/a", "--json", "--bootstrap", "0"]);
  assert.equal(e.code, 0, e.stderr);
  const j = JSON.parse(e.stdout);
  assert.equal(j.settings.run, join(root, "runs/a/config.yaml"));
  assert.deepEqual([j.prompts, j.settings.maxNewTokens, j.settings.template], [12, 2, "plain"]);
  assert.equal(j.accuracy, logged.accuracy, "rlvr eval <run> gives the run's own logged held-out accuracy");

  // --data rows are scored with the run's (plugin) reward too.
  writeFileSync(join(root, "rows.jsonl"), ['{"prompt":"3,7>","answer":"7"}', '{"prompt":"8,1>","answer":"8"}'].join("\n") + "\n");
  const d = rlvr(["eval", "runs/a", "--data", "rows.jsonl", "--json", "--bootstrap", "0", "--max-new-tokens", "2"]);
  assert.equal(d.code, 0, d.stderr);
  assert.equal(JSON.parse(d.stdout).prompts, 2);

  // --plugin instead of plugins: — the run's config.yaml records it, so --resume and eval find it.
  writeFileSync(join(root, "run-b.yaml"), stringify({ ...config("runs/b", []), sft: undefined }));
  const without = rlvr(["train", "run-b.yaml"]);
  assert.notEqual(without.code, 0);
  assert.match(without.stderr, /unknown (task|verifier) "plugin-/);
  const b = rlvr(["train", "run-b.yaml", "--plugin", "./plugin.mjs"]);
  assert.equal(b.code, 0, b.stderr);
  assert.match(readFileSync(join(root, "runs/b/config.yaml"), "utf8"), /plugins:\n\s+- .*\/plugin\.mjs/);
  assert.equal(rlvr(["eval", "runs/b", "--json", "--bootstrap", "0"]).code, 0);
});

test("data gen, verify: --plugin; unknown names get a did-you-mean", { timeout: 120_000 }, () => {
  const g = rlvr(["data", "gen", "plugin-max2", "--n", "3", "--plugin", "./plugin.mjs"]);
  assert.equal(g.code, 0, g.stderr);
  assert.equal(g.stdout.trim().split("\n").length, 3);
  assert.equal(JSON.parse(g.stdout.split("\n")[0]!).task, "plugin-max2");

  const v = rlvr(["verify", "plugin-first-char", "--plugin", "./plugin.mjs"], '{"response": "7 is it", "reference": "7"}\n{"response": "3", "reference": "7"}\n');
  assert.equal(v.code, 0, v.stderr);
  assert.deepEqual(v.stdout.trim().split("\n").map((l) => JSON.parse(l).correct), [true, false]);

  const typo = rlvr(["verify", "exatc"], '{"response": "a", "reference": "a"}\n');
  assert.equal(typo.code, 1);
  assert.match(typo.stderr, /^error: rlvr verify: unknown verifier "exatc"; did you mean "exact"\? choose one of /);
  const task = rlvr(["data", "gen", "additoin", "--n", "1"]);
  assert.match(task.stderr, /unknown task "additoin"; did you mean "addition"\? known tasks: /);
  const missing = rlvr(["data", "gen", "x", "--n", "1", "--plugin", "./nope.mjs"]);
  assert.match(missing.stderr, /^error: --plugin \.\/nope\.mjs: .*nope\.mjs does not exist/);
});
