import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile, cp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { HfTokenizer } from "../../src/tokenizers/hf.ts";
import { loadTokenizer } from "../../src/tokenizers/index.ts";

// A hand-made byte-level BPE in the Qwen2 layout; regenerate with
// `node test/fixtures/tokenizers/make-byte-bpe.mjs`. Ids: byte b → b; merges 256 "Ġt", 257 "he",
// 258 "Ġthe", 259 "ll", 260 "in", 261 "Ġa", 262 "12"; 263 <|endoftext|>, 264 <|im_start|>, 265 <|im_end|>.
const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/tokenizers/byte-bpe");

const CHAT = [
  { role: "user", content: "What is 12+7?" },
  { role: "assistant", content: "19" },
  { role: "user", content: "And 3+4?" },
];
const CHAT_TEXT =
  "<|im_start|>system\nYou are a careful assistant.<|im_end|>\n" +
  "<|im_start|>user\nWhat is 12+7?<|im_end|>\n" +
  "<|im_start|>assistant\n19<|im_end|>\n" +
  "<|im_start|>user\nAnd 3+4?<|im_end|>\n";

test("special tokens come from tokenizer_config.json", async () => {
  const t = await HfTokenizer.load(FIXTURE);
  assert.equal(t.vocabSize, 266);
  assert.equal(t.eosId, 265);
  assert.equal(t.eosToken, "<|im_end|>");
  assert.equal(t.padId, 263);
  assert.equal(t.bosId, null);
  assert.equal(t.unkId, null);
  assert.deepEqual([...t.specialIds].sort(), [263, 264, 265]);
  assert.equal(t.tokenToId("<|im_start|>"), 264);
  assert.equal(t.idToToken(258), "Ġthe");
});

test("byte-level BPE: merges, byte fallback to single bytes, special tokens in text", async () => {
  const t = await HfTokenizer.load(FIXTURE);
  assert.deepEqual(t.encode("the"), [116, 257]);
  assert.deepEqual(t.encode(" the"), [258]);
  assert.deepEqual(t.encode("hello"), [257, 259, 111]);
  assert.deepEqual(t.encode("the hello in 12 a"), [116, 257, 32, 257, 259, 111, 32, 260, 32, 49, 50, 261]);
  assert.deepEqual(t.encode("é😀\n"), [195, 169, 240, 159, 152, 128, 10]);
  assert.deepEqual(t.encode("<|im_start|>user\nhi<|im_end|>"), [264, 117, 115, 101, 114, 10, 104, 105, 265]);
  assert.deepEqual(t.encode(""), []);
  assert.equal(t.decode([264, 104, 105, 265]), "hi");
  assert.equal(t.decode([264, 104, 105, 265], { skipSpecial: false }), "<|im_start|>hi<|im_end|>");
  assert.equal(t.decode([]), "");
  assert.throws(() => t.decode([1, 266]), /id 266 at position 1 is outside \[0, 266\)/);
});

test("encode → decode round-trips any NFC text", async () => {
  const t = await HfTokenizer.load(FIXTURE);
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 30 }), fc.string({ maxLength: 30 }), (a, b) => {
      const s = (a + b).normalize("NFC");
      assert.equal(t.decode(t.encode(s)), s);
    }),
    { numRuns: 300, seed: 11 },
  );
  // spaces are kept as they are (no clean-up of " ." or " 's")
  assert.equal(t.decode(t.encode("a . b 's ,")), "a . b 's ,");
});

test("the Qwen-style chat template renders the exact ChatML text", async () => {
  const t = await HfTokenizer.load(FIXTURE);
  assert.equal(t.applyChatTemplate(CHAT), CHAT_TEXT + "<|im_start|>assistant\n");
  assert.equal(t.applyChatTemplate(CHAT, { addGenerationPrompt: false }), CHAT_TEXT);
  const withSystem = t.applyChatTemplate([{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }]);
  assert.equal(withSystem, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  const ids = t.encode(withSystem);
  assert.equal(ids[0], 264);
  assert.equal(ids.filter((i) => i === 265).length, 2);
});

test("save → load keeps ids and template; loadTokenizer picks HfTokenizer", async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-hf-"));
  const t = await HfTokenizer.load(FIXTURE);
  await t.save(dir);
  const u = await loadTokenizer(dir);
  assert.ok(u instanceof HfTokenizer);
  assert.deepEqual(u.encode("the hello <|im_end|>"), t.encode("the hello <|im_end|>"));
  assert.equal(u.applyChatTemplate(CHAT), t.applyChatTemplate(CHAT));
  assert.equal(u.eosId, t.eosId);
});

test("template sources: chat_template.jinja, a named list; token objects; special_tokens_map fallback", async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-hf-tpl-"));
  await cp(FIXTURE, dir, { recursive: true });
  const cfg = JSON.parse(await readFile(join(dir, "tokenizer_config.json"), "utf8"));

  const noTemplate = { ...cfg, chat_template: undefined, eos_token: { content: "<|endoftext|>", special: true } };
  await writeFile(join(dir, "tokenizer_config.json"), JSON.stringify(noTemplate));
  let t = await HfTokenizer.load(dir);
  assert.equal(t.eosId, 263);
  assert.equal(t.applyChatTemplate([{ role: "user", content: "hi" }]), "user: hi\nassistant: ");

  await writeFile(join(dir, "chat_template.jinja"), "{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}");
  t = await HfTokenizer.load(dir);
  assert.equal(t.applyChatTemplate([{ role: "user", content: "hi" }]), "[user]hi<|endoftext|>");
  await rm(join(dir, "chat_template.jinja"));

  const listed = { ...cfg, chat_template: [{ name: "tool_use", template: "T" }, { name: "default", template: "D{{ messages|length }}" }] };
  await writeFile(join(dir, "tokenizer_config.json"), JSON.stringify(listed));
  assert.equal((await HfTokenizer.load(dir)).applyChatTemplate(CHAT), "D3");

  const { eos_token: _e, ...noEos } = cfg;
  await writeFile(join(dir, "tokenizer_config.json"), JSON.stringify(noEos));
  await writeFile(join(dir, "special_tokens_map.json"), JSON.stringify({ eos_token: { content: "<|im_end|>" } }));
  assert.equal((await HfTokenizer.load(dir)).eosId, 265);
});

test("errors name the file and field", async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-hf-err-"));
  await assert.rejects(HfTokenizer.load(dir), /tokenizer\.json not found/);
  await cp(FIXTURE, dir, { recursive: true });
  const cfg = JSON.parse(await readFile(join(dir, "tokenizer_config.json"), "utf8"));
  await writeFile(join(dir, "tokenizer_config.json"), JSON.stringify({ ...cfg, eos_token: "</s>" }));
  await assert.rejects(HfTokenizer.load(dir), /tokenizer_config\.json at eos_token: "<\/s>" is not in the vocabulary/);
  await writeFile(join(dir, "tokenizer_config.json"), JSON.stringify({ ...cfg, eos_token: null }));
  await assert.rejects(HfTokenizer.load(dir), /at eos_token: missing/);
  await writeFile(join(dir, "tokenizer_config.json"), JSON.stringify({ ...cfg, chat_template: "{% if %}" }));
  const t = await HfTokenizer.load(dir);
  assert.throws(() => t.applyChatTemplate(CHAT), /chat template error/);
  await writeFile(join(dir, "tokenizer_config.json"), "{");
  await assert.rejects(loadTokenizer(dir), /tokenizer_config\.json: not valid JSON/);
});

// Optional: the Rust tokenizers library and transformers' apply_chat_template agree with us.
const py = process.env.RLVR_TEST_PYTHON ?? "python3";
const hasTokenizers = spawnSync(py, ["-c", "import tokenizers"], { encoding: "utf8" }).status === 0;
const hasTransformers = spawnSync(py, ["-c", "import transformers"], { encoding: "utf8" }).status === 0;

test("ids agree with the Rust tokenizers library", { skip: hasTokenizers ? false : `${py} lacks the tokenizers package` }, async () => {
  const t = await HfTokenizer.load(FIXTURE);
  const samples = ["the hello in 12 a", "  spaces\t\tand\n\nlines  ", "Ünïcödé 😀 — done.", CHAT_TEXT, "x<|im_end|>y<|endoftext|>"];
  const r = spawnSync(py, ["-c", `
import sys, json
from tokenizers import Tokenizer
tk = Tokenizer.from_file(sys.argv[1] + "/tokenizer.json")
print(json.dumps([tk.encode(s, add_special_tokens=False).ids for s in json.loads(sys.argv[2])]))
`, FIXTURE, JSON.stringify(samples)], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout) as number[][];
  samples.forEach((s, i) => assert.deepEqual(t.encode(s), got[i], JSON.stringify(s)));
});

test("chat text agrees with transformers' apply_chat_template", { skip: hasTransformers ? false : `${py} lacks transformers` }, async () => {
  const t = await HfTokenizer.load(FIXTURE);
  const r = spawnSync(py, ["-c", `
import sys, json
from transformers import AutoTokenizer
tk = AutoTokenizer.from_pretrained(sys.argv[1])
msgs = json.loads(sys.argv[2])
print(json.dumps([tk.apply_chat_template(msgs, tokenize=False, add_generation_prompt=g) for g in (True, False)]))
`, FIXTURE, JSON.stringify(CHAT)], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [t.applyChatTemplate(CHAT), t.applyChatTemplate(CHAT, { addGenerationPrompt: false })]);
});
