// plugins: in a run config: user modules imported before validation, so the config can name what
// they register (a task, a policy loss); errors name the file, the entry and the fix. And the public
// train(): a config object in, typed events out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, defineTask, hasTask, listPolicyLosses, loadRunConfigFile, train, type TrainEvent } from "../../src/index.ts";

const api = new URL("../../src/index.ts", import.meta.url).href;

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-plugins-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const baseConfig = (extra: string) => `
model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } }
tokenizer: { type: char, alphabet: "0123456789,<" }
${extra}
`;

test("a .ts plugin registers a task and a .mjs plugin a policy loss that the config then names", async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, "package.json"), `{"type": "module"}\n`); // the user's project: ES modules
  writeFileSync(
    join(dir, "parity-task.ts"),
    `import { defineTask } from ${JSON.stringify(api)};
defineTask({ name: "plugin-parity", sample: (rng) => { const x: number = rng.int(0, 99); return { prompt: x + "<", answer: String(x % 2) }; }, verify: (r: string, ex) => r.startsWith(ex.answer) });\n`,
  );
  writeFileSync(
    join(dir, "loss.mjs"),
    `import { registerPolicyLoss } from ${JSON.stringify(api)};
registerPolicyLoss("plugin_pg", (ctx) => { const n = ctx.batchSize * ctx.seqLen; const loss = new Float64Array(n), grad = new Float64Array(n);
  for (let i = 0; i < n; i++) if (ctx.mask[i] > 0) { loss[i] = -ctx.advantages[i] * ctx.logprobs[i]; grad[i] = -ctx.advantages[i]; } return { loss, grad }; });\n`,
  );
  const cfgFile = join(dir, "run.yaml");
  writeFileSync(cfgFile, baseConfig(`plugins: [./parity-task.ts, ./loss.mjs]\ndata: { task: plugin-parity }\nrl: { steps: 1, algorithm: { loss: { name: plugin_pg } } }`));
  assert.equal(hasTask("plugin-parity"), false);
  const cfg = await loadRunConfigFile(cfgFile);
  assert.equal(hasTask("plugin-parity"), true);
  assert.ok(listPolicyLosses().includes("plugin_pg"));
  assert.equal(cfg.algorithm!.loss.name, "plugin_pg");
  assert.deepEqual(cfg.plugins, [join(dir, "parity-task.ts"), join(dir, "loss.mjs")], "recorded as absolute paths (for --resume)");
});

test("plugin errors are one line naming the config, the entry and the fix", async (t) => {
  const dir = tempDir(t);
  const cfgFile = join(dir, "run.yaml");
  writeFileSync(cfgFile, baseConfig(`plugins: [./missing.mjs]\ndata: { task: maximum }`));
  await assert.rejects(loadRunConfigFile(cfgFile), (e: Error) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, new RegExp(`^config error in ${cfgFile.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} at plugins\\[0\\]: .*missing\\.mjs does not exist`));
    assert.equal(e.message.split("\n").length, 1);
    return true;
  });
  writeFileSync(join(dir, "throws.mjs"), `throw new Error("no GPU here\\nsecond line");\n`);
  writeFileSync(cfgFile, baseConfig(`plugins: [./throws.mjs]\ndata: { task: maximum }`));
  await assert.rejects(loadRunConfigFile(cfgFile), /: config error in .* at plugins\[0\]: cannot load \.\/throws\.mjs: no GPU here$/);
  // A .ts plugin in a folder without "type": "module" is CommonJS to tsx; the error says what to do.
  writeFileSync(join(dir, "cjs.ts"), `import { defineTask } from ${JSON.stringify(api)};\nexport const t = defineTask;\n`);
  writeFileSync(cfgFile, baseConfig(`plugins: [./cjs.ts]\ndata: { task: maximum }`));
  await assert.rejects(loadRunConfigFile(cfgFile), /at plugins\[0\]: \.\/cjs\.ts would load as CommonJS .*rename it \.mts or set "type": "module"/);
  writeFileSync(cfgFile, baseConfig(`plugins: ./one.mjs\ndata: { task: maximum }`));
  await assert.rejects(loadRunConfigFile(cfgFile), /at plugins: expected a list of module paths/);
  // Without its plugin, the config's names are unknown (the plugin is what makes them valid).
  writeFileSync(cfgFile, baseConfig(`data: { task: maximum }\nrl: { steps: 1, algorithm: { loss: { name: never_registered_loss } } }`));
  await assert.rejects(loadRunConfigFile(cfgFile), /never_registered_loss/);
});

test("defineTask: ids, disjoint splits, and scores from booleans, numbers or verdicts", () => {
  const task = defineTask({
    name: "api-test-double",
    sample: (rng) => {
      const x = rng.int(0, 999);
      return { prompt: `${x}*2=`, answer: String(2 * x) };
    },
    verify: (r, ex) => (r === ex.answer ? true : r === "half" ? 0.5 : r === "junk" ? (Number.NaN as unknown as boolean) : false),
  });
  const train = Array.from({ length: 300 }, (_, index) => task.generate({ seed: 1, index, difficulty: 0, split: "train" }));
  const test = Array.from({ length: 100 }, (_, index) => task.generate({ seed: 1, index, difficulty: 0, split: "test" }));
  assert.equal(train[0]!.id, "api-test-double-train-d0-000000");
  assert.equal(train[0]!.task, "api-test-double");
  const trainPrompts = new Set(train.map((e) => e.prompt));
  assert.ok(test.every((e) => !trainPrompts.has(e.prompt)), "no test prompt appears in train");
  const ex = test[0]!;
  assert.deepEqual([task.verify(ex.answer, ex).reward, task.verify("half", ex).reward, task.verify("x", ex).reward], [1, 0.5, 0]);
  assert.equal(task.verify(ex.answer, ex).correct, true);
  assert.throws(() => task.verify("junk", ex), /task "api-test-double": verify returned NaN for example api-test-double-test-d0-000000/);
  assert.throws(() => defineTask({ name: "api-test-double", sample: () => ({ prompt: "", answer: "" }), verify: () => true }), /already registered/);
  assert.throws(() => defineTask({ name: "api-test-none", verify: () => true } as never), /exactly one of sample\(rng\) and generate/);
});

test("train() takes a config object and reports typed events: stages, a metrics record per RL step, samples, evals", { timeout: 300_000 }, async (t) => {
  const dir = tempDir(t);
  const events: TrainEvent[] = [];
  const s = await train(
    {
      out: join(dir, "run"),
      model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
      tokenizer: { type: "char", alphabet: "0123456789,>" },
      data: { task: "maximum", trainSize: 64, testSize: 16 },
      rl: { steps: 3, promptsPerStep: 4, groupSize: 4, maxNewTokens: 1 },
      eval: { maxNewTokens: 1 },
    },
    { quiet: true, onEvent: (e) => events.push(e) },
  );
  const stages = events.flatMap((e) => (e.type === "stage" ? [e.stage] : []));
  for (const st of ["setup", "eval", "rl", "save"] as const) assert.ok(stages.includes(st), `stage ${st} in ${stages.join(",")}`);
  const rl = events.flatMap((e) => (e.type === "metrics" && e.stage === "rl" ? [e] : []));
  assert.deepEqual(rl.map((e) => e.step), [1, 2, 3]);
  assert.ok(rl.every((e) => Number.isFinite(e.metrics["loss/policy"]) && Number.isFinite(e.metrics["reward/mean"])));
  assert.ok(events.some((e) => e.type === "samples" && e.samples.length > 0));
  const evals = events.flatMap((e) => (e.type === "eval" ? [e] : []));
  assert.deepEqual(evals.map((e) => [e.label, e.step]), [["init", 0], ["rl", 3]]);
  assert.equal(evals[1]!.result.accuracy, s.evals["rl"]!.accuracy);
});

test("rlvr train: a plugin outside any project that imports \"rlvr\" by name registers into the CLI's own registries", { timeout: 300_000 }, (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, "package.json"), `{"type": "module"}\n`);
  writeFileSync(
    join(dir, "echo-task.ts"),
    `import { defineTask } from "rlvr";
defineTask({ name: "cli-echo-digit", sample: (rng) => { const x: number = rng.int(0, 9); return { prompt: x + "<", answer: String(x) }; }, verify: (r, ex) => r.startsWith(ex.answer) });\n`,
  );
  writeFileSync(join(dir, "run.yaml"), baseConfig(`plugins: [./echo-task.ts]\nout: ${join(dir, "run")}\ndata: { task: cli-echo-digit, trainSize: 32, testSize: 8 }\nrl: { steps: 1, promptsPerStep: 2, groupSize: 2, maxNewTokens: 1 }\neval: { maxNewTokens: 1 }`));
  const bin = new URL("../../bin/rlvr.js", import.meta.url);
  const r = spawnSync(process.execPath, [bin.pathname, "train", join(dir, "run.yaml")], { cwd: dir, encoding: "utf8", env: { ...process.env, RLVR_THREADS: "1" } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /held-out after rl: accuracy/);
});
