import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteFile } from "hyparquet-writer";
import { loadDataset, loadChatTemplate, renderPrompt, buildMessages, R1_SYSTEM_PROMPT, BOXED_INSTRUCTION, type Example } from "../../src/tasks/index.ts";

const dir = mkdtempSync(join(tmpdir(), "rlvr-prompts-"));

// A ChatML layout like Qwen2's: a default system turn when none is given, generation prompt at the end.
const CHATML =
  "{% for message in messages %}" +
  "{% if loop.first and message['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}" +
  "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
  "{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

function writeConfig(): string {
  const p = join(dir, "tokenizer_config.json");
  writeFileSync(
    p,
    JSON.stringify({
      chat_template: CHATML,
      eos_token: "<|im_end|>",
      pad_token: { content: "<|endoftext|>", lstrip: false },
      bos_token: null,
      model_max_length: 32768,
    }),
  );
  return p;
}

test("GSM8K (JSONL) and MATH (Parquet) rows render through a Qwen2-style chat template", async () => {
  const chat = loadChatTemplate(writeConfig());
  assert.equal(chat.specials.eos_token, "<|im_end|>");
  assert.equal(chat.specials.pad_token, "<|endoftext|>");

  const g = join(dir, "gsm8k.jsonl");
  writeFileSync(g, JSON.stringify({ question: "Tom has 3 apples and buys 4 more. How many?", answer: "3 + 4 = 7\n#### 7" }) + "\n");
  const [ge] = (await loadDataset(g, { preset: "gsm8k" })).examples;
  assert.equal(
    renderPrompt(ge!, { chat }),
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nTom has 3 apples and buys 4 more. How many?<|im_end|>\n<|im_start|>assistant\n",
  );

  const m = join(dir, "math.parquet");
  parquetWriteFile({
    filename: m,
    columnData: [
      { name: "problem", data: ["What is $1+1$?"], type: "STRING" },
      { name: "solution", data: ["It is $\\boxed{2}$."], type: "STRING" },
    ],
  });
  const [me] = (await loadDataset(m, { preset: "math" })).examples;
  assert.equal(me!.answer, "2");
  assert.equal(
    renderPrompt(me!, { chat, template: "r1" }),
    `<|im_start|>system\n${R1_SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\nWhat is $1+1$?<|im_end|>\n<|im_start|>assistant\n`,
  );
  assert.equal(
    renderPrompt(me!, { chat, template: "boxed" }),
    `<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is $1+1$?\n${BOXED_INSTRUCTION}<|im_end|>\n<|im_start|>assistant\n`,
  );
});

test("named templates without a chat template", () => {
  const ex: Example = { id: "a", prompt: "12+30=", answer: "42", task: "addition" };
  assert.equal(renderPrompt(ex), "12+30=");
  assert.equal(renderPrompt(ex, { template: "boxed" }), `12+30=\n${BOXED_INSTRUCTION}`);
  assert.equal(renderPrompt(ex, { template: "r1" }), `System: ${R1_SYSTEM_PROMPT}\nUser: 12+30=\nAssistant:`);
  assert.throws(() => buildMessages(ex, "fancy" as "plain"), /unknown prompt template "fancy"; known templates: plain, r1, boxed/);
  const chatEx: Example = { ...ex, meta: { messages: [{ role: "system", content: "S" }, { role: "user", content: "U" }] } };
  assert.deepEqual(buildMessages(chatEx, "r1").map((m) => m.role), ["system", "user"]);
  assert.equal(buildMessages(chatEx, "r1")[0]!.content, R1_SYSTEM_PROMPT);
});

test("tokenizer_config.json errors name the file", () => {
  const p = join(dir, "no-template.json");
  writeFileSync(p, JSON.stringify({ eos_token: "</s>" }));
  assert.throws(() => loadChatTemplate(p), new RegExp(`${p.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} has no chat_template`));
  const bad = join(dir, "bad.json");
  writeFileSync(bad, "{");
  assert.throws(() => loadChatTemplate(bad), /cannot read .*bad\.json as JSON/);
});
