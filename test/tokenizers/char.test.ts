import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { CharTokenizer, CHAR_SPECIAL_TOKENS } from "../../src/tokenizers/char.ts";
import { HfTokenizer } from "../../src/tokenizers/hf.ts";
import { loadTokenizer } from "../../src/tokenizers/index.ts";

const ALPHA = "0123456789+=? \n";
/** Text inside a sequence: no special tokens added. */
const RAW = { addSpecialTokens: false };

test("ids: specials 0-3, then the alphabet in order", () => {
  const t = new CharTokenizer({ alphabet: ALPHA });
  assert.deepEqual([t.padId, t.bosId, t.eosId, t.unkId], [0, 1, 2, 3]);
  assert.deepEqual(CHAR_SPECIAL_TOKENS, ["<pad>", "<bos>", "<eos>", "<unk>"]);
  assert.equal(t.vocabSize, 4 + ALPHA.length);
  assert.deepEqual(t.encode("10+2=?", RAW), [5, 4, 14, 6, 15, 16]);
  assert.deepEqual(t.encode("10+2=?"), [1, 5, 4, 14, 6, 15, 16], "a prompt starts with <bos> by default (add_special_tokens=True)");
  assert.equal(t.decode([5, 4, 14, 6, 15, 16]), "10+2=?");
  assert.deepEqual(t.encode("", RAW), []);
  assert.deepEqual(t.encode(""), [1]);
  assert.equal(t.tokenToId("+"), 14);
  assert.equal(t.tokenToId("<eos>"), 2);
  assert.equal(t.idToToken(4), "0");
});

test("special-token strings in text encode to their ids; decode drops them unless asked", () => {
  const t = new CharTokenizer({ alphabet: ALPHA + "<>eos" });
  const ids = t.encode("<bos>1+1<eos><pad>", RAW);
  assert.deepEqual(ids, [1, 5, 14, 5, 2, 0]);
  assert.equal(t.decode(ids), "1+1");
  assert.equal(t.decode(ids, { skipSpecial: false }), "<bos>1+1<eos><pad>");
  // "<" on its own, or a partial special, is an ordinary character
  assert.equal(t.decode(t.encode("<eo<s>")), "<eo<s>");
  assert.deepEqual(t.encode("<bos>1"), [1, 1, 5], "a <bos> in the text is not merged with the added one (as Hugging Face)");
});

test("unknown characters: an error naming the character, or <unk> when asked", () => {
  const strict = new CharTokenizer({ alphabet: ALPHA });
  assert.throws(() => strict.encode("12x3"), /character "x" \(U\+0078\) at index 2 is not in the alphabet/);
  const lenient = new CharTokenizer({ alphabet: ALPHA, unknown: "unk" });
  assert.deepEqual(lenient.encode("1x😀2", RAW), [5, 3, 3, 6]);
  assert.equal(lenient.decode(lenient.encode("1x2")), "12");
  assert.equal(lenient.decode(lenient.encode("1x2", RAW), { skipSpecial: false }), "1<unk>2");
});

test("multi-unit characters and bad alphabets", () => {
  const t = new CharTokenizer({ alphabet: ["a", "😀", "é"] });
  assert.deepEqual(t.encode("😀aé", RAW), [5, 4, 6]);
  assert.equal(t.decode([5, 4, 6]), "😀aé");
  assert.throws(() => new CharTokenizer({ alphabet: "abca" }), /alphabet has "a" twice \(entries 0 and 3\)/);
  assert.throws(() => new CharTokenizer({ alphabet: ["a", "bc"] }), /entry 1 \("bc"\) must be exactly one character/);
  assert.throws(() => new CharTokenizer({ alphabet: "" }), /alphabet is empty/);
  assert.throws(() => t.decode([1, 7]), /id 7 at position 1 is outside \[0, 7\)/);
  assert.throws(() => t.decode([-1]), RangeError);
});

test("chat: plain layout without a template, Jinja with one", () => {
  const msgs = [{ role: "system", content: "add" }, { role: "user", content: "1+2" }];
  const plain = new CharTokenizer({ alphabet: ALPHA });
  assert.equal(plain.applyChatTemplate(msgs), "system: add\nuser: 1+2\nassistant: ");
  assert.equal(plain.applyChatTemplate(msgs, { addGenerationPrompt: false }), "system: add\nuser: 1+2\n");
  const tpl = new CharTokenizer({
    alphabet: ALPHA,
    chatTemplate: "{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}{{ m.content }}={% endif %}{% endfor %}",
  });
  assert.equal(tpl.applyChatTemplate(msgs), "<bos>1+2=");
  assert.deepEqual(tpl.encode(tpl.applyChatTemplate(msgs), RAW), [1, 5, 14, 6, 15]);
});

test("save → load round-trips, and loadTokenizer picks the char tokenizer", async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-char-"));
  const t = new CharTokenizer({ alphabet: ALPHA, unknown: "unk", chatTemplate: "{{ messages[0].content }}" });
  await t.save(dir);
  const cfg = JSON.parse(await readFile(join(dir, "tokenizer_config.json"), "utf8"));
  assert.equal(cfg.eos_token, "<eos>");
  assert.deepEqual(cfg.rlvr_char_tokenizer, { version: 1, unknown: "unk" });
  for (const u of [await CharTokenizer.load(dir), await loadTokenizer(dir)]) {
    assert.ok(u instanceof CharTokenizer);
    assert.deepEqual(u.alphabet, t.alphabet);
    assert.equal(u.unknown, "unk");
    assert.equal(u.chatTemplate, "{{ messages[0].content }}");
    assert.deepEqual(u.encode("12+3=?\n"), t.encode("12+3=?\n"));
  }
});

test("@huggingface/tokenizers loads the saved files and gives the same ids, text and specials", async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-char-hf-"));
  const alphabet = [..."0123456789+-*/=() \n<>abcxyzé", "😀", "\t"];
  const t = new CharTokenizer({ alphabet, unknown: "unk" });
  await t.save(dir);
  const hf = await HfTokenizer.load(dir);
  assert.deepEqual([hf.vocabSize, hf.bosId, hf.eosId, hf.padId, hf.unkId], [t.vocabSize, 1, 2, 0, 3]);
  const text = fc.array(fc.oneof(fc.constantFrom(...alphabet), fc.constantFrom("<eos>", "<bos>", "<pad>", "<unk>", "q", "<")), { maxLength: 40 }).map((a) => a.join(""));
  fc.assert(
    fc.property(text, (s) => {
      const ids = t.encode(s, RAW);
      assert.deepEqual(hf.encode(s, RAW), ids);
      assert.deepEqual(hf.encode(s), t.encode(s), "with special tokens (the saved post-processor adds <bos>)");
      assert.equal(hf.decode(ids), t.decode(ids));
      assert.equal(hf.decode(ids, { skipSpecial: false }), t.decode(ids, { skipSpecial: false }));
    }),
    { numRuns: 300, seed: 7 },
  );
});

const py = process.env.RLVR_TEST_PYTHON ?? "python3";
const hasPyTokenizers = spawnSync(py, ["-c", "import tokenizers"], { encoding: "utf8" }).status === 0;

test("the Rust tokenizers library (Python) gives the same ids", { skip: hasPyTokenizers ? false : `${py} lacks the tokenizers package` }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-char-py-"));
  const t = new CharTokenizer({ alphabet: [..."0123456789+= \n<>é", "😀"], unknown: "unk" });
  await t.save(dir);
  const samples = ["12+3=15\n", "<bos>1 2<eos>", "é😀x<", "", "<eos<eos>>"];
  const r = spawnSync(py, ["-c", `
import sys, json
from tokenizers import Tokenizer
tk = Tokenizer.from_file(sys.argv[1] + "/tokenizer.json")
out = []
for s in json.loads(sys.argv[2]):
    ids = tk.encode(s, add_special_tokens=False).ids
    out.append([ids, tk.decode(ids, skip_special_tokens=True), tk.encode(s).ids])
print(json.dumps(out))
`, dir, JSON.stringify(samples)], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout) as [number[], string, number[]][];
  samples.forEach((s, i) => {
    assert.deepEqual(got[i]![0], t.encode(s, RAW), JSON.stringify(s));
    assert.equal(got[i]![1], t.decode(t.encode(s)), JSON.stringify(s));
    assert.deepEqual(got[i]![2], t.encode(s), `${JSON.stringify(s)} with special tokens`);
  });
});

const hasTransformers = spawnSync(py, ["-c", "import transformers"], { encoding: "utf8" }).status === 0;

test("transformers' AutoTokenizer loads the saved files with the same specials and ids", { skip: hasTransformers ? false : `${py} lacks transformers` }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-char-tf-"));
  const t = new CharTokenizer({ alphabet: ALPHA });
  await t.save(dir);
  const r = spawnSync(py, ["-c", `
import sys, json
from transformers import AutoTokenizer
tk = AutoTokenizer.from_pretrained(sys.argv[1])
ids = tk.encode("12+3=15\\n", add_special_tokens=False)
print(json.dumps([tk.bos_token_id, tk.eos_token_id, tk.pad_token_id, tk.unk_token_id, len(tk), ids, tk.decode([1] + ids + [2], skip_special_tokens=True), tk("12+3=")["input_ids"]]))
`, dir], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [1, 2, 0, 3, t.vocabSize, t.encode("12+3=15\n", RAW), "12+3=15\n", t.encode("12+3=")]);
});
