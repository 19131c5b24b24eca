// The prompt encoder (src/tokenizers/prompt.ts): messages of an example, special tokens exactly
// once, the end-of-turn check, fail-closed errors; chat rows in datasets; data.system in config.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile, cp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HfTokenizer, CharTokenizer, promptEncoder, exampleMessages, endOfTurnId, chatPromptIds } from "../../src/tokenizers/index.ts";
import { loadDataset } from "../../src/tasks/dataset.ts";
import { chatPrompt } from "../../src/serve/prompt.ts";
import { parseRunConfig } from "../../src/config/schema.ts";
import type { Example } from "../../src/core/example.ts";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "tokenizers", "byte-bpe");
const RAW = { addSpecialTokens: false };
const ex = (prompt: string, meta?: Record<string, unknown>): Example => ({ id: "x", prompt, answer: "1", task: "t", ...(meta ? { meta } : {}) });

test("an example's chat: the prompt as one user message; the row's system, else data.system, first; r1 and boxed shape it", () => {
  assert.deepEqual(exampleMessages(ex("1+2?")), [{ role: "user", content: "1+2?" }]);
  assert.deepEqual(exampleMessages(ex("1+2?"), { system: "D" }), [{ role: "system", content: "D" }, { role: "user", content: "1+2?" }]);
  assert.deepEqual(exampleMessages(ex("1+2?", { system: "Row" }), { system: "D" }), [{ role: "system", content: "Row" }, { role: "user", content: "1+2?" }]);
  const chat = [{ role: "system", content: "Own" }, { role: "user", content: "q" }];
  assert.deepEqual(exampleMessages(ex("q", { messages: chat }), { system: "D" }), chat, "a chat with its own system message keeps it");
  assert.equal(exampleMessages(ex("q"), { template: "r1", system: "D" })[0]!.content.startsWith("You are a helpful assistant. First think"), true);
  assert.match(exampleMessages(ex("q"), { template: "boxed" })[0]!.content, /^q\nReason step by step/);
});

test("chat prompts: the template's text encoded without added special tokens; text prompts with them", async () => {
  const tok = await HfTokenizer.load(FIXTURE);
  const enc = promptEncoder(tok, { chat: true });
  const ids = Array.from(enc(ex("the hello")));
  assert.deepEqual(ids, tok.encode(tok.applyChatTemplate([{ role: "user", content: "the hello" }]), RAW));
  assert.equal(tok.decode(ids, { skipSpecial: false }), "<|im_start|>system\nYou are a careful assistant.<|im_end|>\n<|im_start|>user\nthe hello<|im_end|>\n<|im_start|>assistant\n");
  assert.deepEqual(Array.from(promptEncoder(tok)(ex("the hello"))), tok.encode("the hello"), "data.chat off: the text, with the tokenizer's special tokens (none here)");
  assert.equal(endOfTurnId(tok), 265, "<|im_end|> ends an assistant turn");
});

test("special tokens exactly once: a BOS-adding tokenizer whose template writes {{ bos_token }} gets one BOS", async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-bos-"));
  await cp(FIXTURE, dir, { recursive: true });
  const tj = JSON.parse(await readFile(join(dir, "tokenizer.json"), "utf8"));
  tj.post_processor = {
    type: "TemplateProcessing",
    single: [{ SpecialToken: { id: "<|endoftext|>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
    pair: [{ SpecialToken: { id: "<|endoftext|>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
    special_tokens: { "<|endoftext|>": { id: "<|endoftext|>", ids: [263], tokens: ["<|endoftext|>"] } },
  };
  await writeFile(join(dir, "tokenizer.json"), JSON.stringify(tj));
  const cfg = JSON.parse(await readFile(join(dir, "tokenizer_config.json"), "utf8"));
  await writeFile(join(dir, "tokenizer_config.json"), JSON.stringify({ ...cfg, bos_token: "<|endoftext|>", chat_template: cfg.chat_template }));
  await writeFile(join(dir, "chat_template.jinja"), "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}");
  const tok = await HfTokenizer.load(dir);
  assert.equal(tok.chatTemplate!.startsWith("{{ bos_token }}"), true, "chat_template.jinja wins over tokenizer_config's chat_template (as transformers)");
  const chat = Array.from(promptEncoder(tok, { chat: true })(ex("in")));
  assert.equal(chat.filter((id) => id === 263).length, 1);
  assert.equal(chat[0], 263);
  const text = Array.from(promptEncoder(tok)(ex("in")));
  assert.deepEqual(text, [263, ...tok.encode("in", RAW)]);
});

test("fail closed: data.chat without a chat template, and a template whose end of turn is not eos", async () => {
  const char = new CharTokenizer({ alphabet: "0123456789+=" });
  assert.throws(() => promptEncoder(char, { chat: true }, "runs/x/ckpt"), /data\.chat: runs\/x\/ckpt has no chat template .*set data\.chat: false/);
  const dir = await mkdtemp(join(tmpdir(), "rlvr-eot-"));
  await cp(FIXTURE, dir, { recursive: true });
  const cfg = JSON.parse(await readFile(join(dir, "tokenizer_config.json"), "utf8"));
  await writeFile(join(dir, "tokenizer_config.json"), JSON.stringify({ ...cfg, eos_token: "<|endoftext|>" }));
  const tok = await HfTokenizer.load(dir);
  assert.throws(() => promptEncoder(tok, { chat: true }, dir), /ends an assistant turn with "<\|im_end\|>" \(id 265\) but eos_token is "<\|endoftext\|>" \(id 263\).*set eos_token in tokenizer_config\.json to "<\|im_end\|>"/);
  assert.doesNotThrow(() => promptEncoder(tok, {}), "text prompts do not need the template");
  // A char tokenizer with a template that writes no special token after a turn: sampling ends at eos as usual.
  const tpl = new CharTokenizer({ alphabet: "0123456789+=:\n", chatTemplate: "{% for m in messages %}{{ m.content }}\n{% endfor %}" });
  assert.equal(endOfTurnId(tpl), null);
  assert.deepEqual(Array.from(chatPromptIds(tpl, [{ role: "user", content: "1+2=" }])), tpl.encode("1+2=\n", RAW));
});

test("datasets: a row's chat in messages, an optional system string; conflicts and bad types name the line", async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-chatrows-"));
  const file = join(dir, "rows.jsonl");
  const rows = [
    { messages: [{ role: "user", content: "2+2?" }], answer: "4" },
    { prompt: "3+3?", system: "Be brief.", answer: "6" },
  ];
  await writeFile(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const { examples } = await loadDataset(file);
  assert.equal(examples[0]!.prompt, "2+2?");
  assert.deepEqual(examples[0]!.meta?.messages, rows[0]!.messages);
  assert.equal(examples[1]!.meta?.system, "Be brief.");
  await writeFile(file, JSON.stringify({ messages: [{ role: "system", content: "A" }, { role: "user", content: "q" }], system: "B", answer: "1" }) + "\n");
  await assert.rejects(loadDataset(file), /line 1: the row has both a "system" field and a system message in "messages"; keep one/);
  await writeFile(file, JSON.stringify({ prompt: "q", system: 3, answer: "1" }) + "\n");
  await assert.rejects(loadDataset(file), /line 1: field "system" is .*expected a string/);
  await writeFile(file, JSON.stringify({ question: "q", answer: "1" }) + "\n");
  await assert.rejects(loadDataset(file), /missing field "prompt" .*or give the row "messages": a chat/);
});

test("config: data.chat defaults off; data.system with the r1 template is refused", () => {
  const base = { model: { init: { hiddenSize: 16 } }, tokenizer: { type: "char" as const, alphabet: "01" }, rl: { steps: 1 } };
  const cfg = parseRunConfig({ ...base, data: { task: "addition" } });
  assert.equal(cfg.data.chat, false);
  assert.equal(parseRunConfig({ ...base, data: { task: "addition", chat: true, system: "S" } }).data.system, "S");
  assert.throws(() => parseRunConfig({ ...base, data: { task: "addition", template: "r1", system: "S" } }), /data\.system and data\.template: r1 both set the system message/);
});

test("serve: a chat to a character model whose alphabet lacks the layout's letters is a 400 that says what to do", () => {
  const tok = new CharTokenizer({ alphabet: "0123456789+=" });
  assert.throws(() => chatPrompt(tok, [{ role: "user", content: "1+2=" }], null), (e: Error & { status?: number }) => {
    assert.match(e.message, /character "u" .* is not in the alphabet.*send the prompt text to \/v1\/completions instead/);
    return true;
  });
});
