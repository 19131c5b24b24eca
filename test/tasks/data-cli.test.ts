import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runDataGen, inspectDataset } from "../../src/cli/commands/data.ts";
import { loadDataset, BOXED_INSTRUCTION, R1_SYSTEM_PROMPT } from "../../src/tasks/index.ts";

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "test/helpers/cli-driver.ts", ...args], { encoding: "utf8" });

test("rlvr data gen writes JSONL to stdout and to --out, readable by the loader", async () => {
  const r = cli("data", "gen", "addition", "--n", "5", "--difficulty", "2", "--seed", "4");
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(rows.length, 5);
  assert.match(rows[0].prompt, /^\d+\+\d+=$/);
  assert.equal(r.stdout, runDataGen("addition", { n: 5, seed: 4, difficulty: 2 }));

  const out = join(mkdtempSync(join(tmpdir(), "rlvr-cli-")), "t.jsonl");
  const w = cli("data", "gen", "countdown", "--n", "4", "--seed", "2", "--split", "test", "--out", out);
  assert.equal(w.status, 0, w.stderr);
  const { examples } = await loadDataset(out);
  assert.equal(examples.length, 4);
  assert.ok(examples.every((e) => e.id.startsWith("countdown-test-d4-")));
  assert.match(await inspectDataset(out, {}), /examples: 4 {3}skipped rows: 0\nfields: id, prompt, answer, task, difficulty, meta, solution\n {2}countdown \(difficulty 4\): 4/);
  assert.equal(readFileSync(out, "utf8").split("\n").length, 5);
});

test("rlvr data gen reports unknown tasks and bad options", () => {
  const a = cli("data", "gen", "nope", "--n", "1");
  assert.notEqual(a.status, 0);
  assert.match(a.stderr, /unknown task "nope"; known tasks: /);
  const b = cli("data", "gen", "addition", "--n", "-1");
  assert.notEqual(b.status, 0);
  assert.match(b.stderr, /--n: expected an integer >= 0, got "-1"/);
  const c = cli("data", "gen", "addition", "--n", "1", "--split", "val");
  assert.match(c.stderr, /--split: expected train or test, got "val"/);
  assert.equal(runDataGen("addition", { n: 0, seed: 1 }), "");
});

test("rlvr data inspect renders the shown prompts with --template and a tokenizer's --chat-template", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-inspect-"));
  const file = join(dir, "d.jsonl");
  writeFileSync(file, JSON.stringify({ prompt: "What is 2+3?", answer: "5" }) + "\n");
  // A tokenizer directory whose tokenizer_config.json holds a ChatML-style template, and one with
  // only a separate chat_template.jinja (special tokens still from tokenizer_config.json).
  const chatml =
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}" +
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  const tokA = join(dir, "tokA");
  mkdirSync(tokA);
  writeFileSync(join(tokA, "tokenizer_config.json"), JSON.stringify({ chat_template: chatml, eos_token: "<|im_end|>" }));
  const tokB = join(dir, "tokB");
  mkdirSync(tokB);
  writeFileSync(join(tokB, "tokenizer_config.json"), JSON.stringify({ bos_token: "<s>" }));
  writeFileSync(join(tokB, "chat_template.jinja"), "{{ bos_token }}{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}[assistant]");

  // Default: plain, no chat template → the bare prompt, as small character-level models see it.
  const plain = await inspectDataset(file, {});
  assert.match(plain, /prompts rendered with template plain:\n\n--- .+ ---\nWhat is 2\+3\?\nanswer: 5\n/);
  assert.ok(plain.includes("\nWhat is 2+3?\nanswer: 5\n"), plain);

  const boxed = await inspectDataset(file, {}, 3, { template: "boxed" });
  assert.ok(boxed.includes(`\nWhat is 2+3?\n${BOXED_INSTRUCTION}\nanswer: 5\n`), boxed);

  const r = cli("data", "inspect", file, "--template", "r1", "--chat-template", tokA);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(r.stdout.includes(`prompts rendered with template r1 and the chat template of ${tokA}:`), r.stdout);
  assert.ok(
    r.stdout.includes(`<|im_start|>system\n${R1_SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\nWhat is 2+3?<|im_end|>\n<|im_start|>assistant\n\nanswer: 5\n`),
    r.stdout,
  );
  // A tokenizer_config.json file works as well as its directory.
  assert.equal(await inspectDataset(file, {}, 3, { template: "r1", chatTemplate: join(tokA, "tokenizer_config.json") }), r.stdout.replace(tokA, join(tokA, "tokenizer_config.json")));

  const j = await inspectDataset(file, {}, 3, { chatTemplate: tokB });
  assert.ok(j.includes("\n<s>[user] What is 2+3?\n[assistant]\nanswer: 5\n"), j);

  const bad = cli("data", "inspect", file, "--template", "fancy");
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--template: expected one of plain, r1, boxed, got "fancy"/);
  const none = join(dir, "none");
  mkdirSync(none);
  await assert.rejects(inspectDataset(file, {}, 3, { chatTemplate: none }), /no chat template in .*none \(looked for chat_template\.jinja, chat_template\.json and tokenizer_config\.json's chat_template\)/);
  await assert.rejects(inspectDataset(file, {}, 3, { chatTemplate: join(dir, "missing") }), /chat template: .*missing not found/);
});
