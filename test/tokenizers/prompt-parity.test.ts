// Token parity of prompts across train, sample, eval and serve on a small Hugging Face tokenizer
// with a ChatML template (the byte-level BPE fixture), and on a char tokenizer without chat.
// The real SmolLM2 tokenizer against transformers: test/real/chat-parity.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { HfTokenizer, CharTokenizer } from "../../src/tokenizers/index.ts";
import { train, evaluateCheckpoint } from "../../src/index.ts";
import { promptIdsEverywhere, type ParityCase } from "../helpers/prompt-parity.ts";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "tokenizers", "byte-bpe");
const RAW = { addSpecialTokens: false };

const CASES: ParityCase[] = [
  // a prompt string: one user message, data.system as the system message
  { row: { prompt: "What is 12+7?" }, messages: [{ role: "system", content: "Add." }, { role: "user", content: "What is 12+7?" }] },
  // a chat row with its own system field (wins over data.system)
  { row: { messages: [{ role: "user", content: "the hello" }], system: "Be brief." }, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "the hello" }] },
  // a multi-turn chat with a system message of its own
  {
    row: { messages: [{ role: "system", content: "S" }, { role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "in 12" }] },
    messages: [{ role: "system", content: "S" }, { role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "in 12" }],
  },
];

test("data.chat: one example gives the same prompt ids in train, sample, eval and serve — the template's tokens, special tokens once", async () => {
  const tok = await HfTokenizer.load(FIXTURE);
  const ids = await promptIdsEverywhere(FIXTURE, CASES, { chat: true, system: "Add." });
  const expected = CASES.map((c) => tok.encode(tok.applyChatTemplate(c.messages), RAW));
  assert.equal(
    tok.decode(expected[0]!, { skipSpecial: false }),
    "<|im_start|>system\nAdd.<|im_end|>\n<|im_start|>user\nWhat is 12+7?<|im_end|>\n<|im_start|>assistant\n",
  );
  assert.equal(expected[0]!.filter((id) => id === 264).length, 3, "one <|im_start|> per turn and none added");
  assert.deepEqual(ids.train, expected, "train");
  assert.deepEqual(ids.sample, expected, "sample (OpenAI-compatible sampler → served engine)");
  assert.deepEqual(ids.eval, expected, "eval (rlvr eval --endpoint, the run's chat format)");
  assert.deepEqual(ids.serve, expected, "serve (chat completions with the same messages)");
});

test("without data.chat: text prompts carry the tokenizer's special tokens (<bos> first for a char model) in train, sample, eval and serve", async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-parity-char-"));
  await new CharTokenizer({ alphabet: "0123456789+=? \nabcdefghijklmnopqrstuvwxyz:" }).save(dir);
  const cases: ParityCase[] = [{ row: { prompt: "12+7=" }, messages: [] }, { row: { prompt: "3+4=" }, messages: [] }];
  const tok = await CharTokenizer.load(dir);
  const ids = await promptIdsEverywhere(dir, cases, { chat: false });
  const expected = [[1, ...tok.encode("12+7=", RAW)], [1, ...tok.encode("3+4=", RAW)]];
  assert.deepEqual(ids.train, expected);
  assert.deepEqual(ids.sample, expected);
  assert.deepEqual(ids.eval, expected);
  assert.deepEqual(ids.serve, expected, "a completions request with the same text");
});

const py = process.env.RLVR_TEST_PYTHON ?? "python3";
const hasTransformers = spawnSync(py, ["-c", "import transformers"], { encoding: "utf8" }).status === 0;

test("the chat prompt ids equal transformers' apply_chat_template(tokenize=True) on the fixture", { skip: hasTransformers ? false : `${py} lacks transformers` }, async () => {
  const tok = await HfTokenizer.load(FIXTURE);
  const r = spawnSync(py, ["-c", `
import sys, json
from transformers import AutoTokenizer
tk = AutoTokenizer.from_pretrained(sys.argv[1])
out = []
for m in json.loads(sys.argv[2]):
    ids = tk.apply_chat_template(m, add_generation_prompt=True, tokenize=True)
    out.append(list(ids["input_ids"] if hasattr(ids, "keys") else ids))
print(json.dumps(out))
`, FIXTURE, JSON.stringify(CASES.map((c) => c.messages))], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), CASES.map((c) => tok.encode(tok.applyChatTemplate(c.messages), RAW)));
});

test("a run with data.chat trains (SFT + RL) and evaluateCheckpoint repeats its evaluation", { timeout: 300_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "rlvr-chat-run-"));
  try {
    const rows = Array.from({ length: 16 }, (_, i) => (i % 2 ? { prompt: `the ${i}`, answer: "12" } : { messages: [{ role: "user", content: `hello ${i}` }], answer: "12" }));
    writeFileSync(join(dir, "rows.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const out = join(dir, "run");
    await train(
      {
        seed: 2,
        out,
        model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 64 } },
        tokenizer: { type: "hf", path: FIXTURE },
        data: { train: join(dir, "rows.jsonl"), test: join(dir, "rows.jsonl"), verifier: "exact", chat: true, system: "Answer." },
        sft: { steps: 2, batchSize: 8, lr: 0.01 },
        rl: { steps: 1, promptsPerStep: 2, groupSize: 2, maxNewTokens: 3 },
        eval: { maxNewTokens: 3 },
      },
      { quiet: true },
    );
    const logged = JSON.parse(readFileSync(join(out, "eval.jsonl"), "utf8").trim().split("\n").at(-1)!) as { accuracy: number; meanLength: number };
    const mine = await evaluateCheckpoint(out);
    assert.deepEqual([mine.accuracy, mine.meanLength], [logged.accuracy, logged.meanLength]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
