// The real SmolLM2-135M-Instruct tokenizer (ChatML template, bos <|im_start|> = 1, eos
// <|im_end|> = 2, add_bos_token false): one example's prompt ids are the same in train, sample,
// eval and serve, and equal transformers' apply_chat_template(messages, add_generation_prompt=True,
// tokenize=True). Runs in `npm run test:real` (CI); skips, saying why, without the model or Python.
// RLVR_REAL_MODEL overrides the model directory, RLVR_TEST_PYTHON the Python with transformers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { HfTokenizer, endOfTurnId } from "../../src/tokenizers/index.ts";
import { promptIdsEverywhere, type ParityCase } from "../helpers/prompt-parity.ts";
import { realModelDir } from "./helpers/real.ts";

const MODEL = realModelDir(); // $RLVR_REAL_MODEL, else the `rlvr setup model` import (throws, naming the command, when missing)
const REPO = join(import.meta.dirname, "..", "..");
const PY = process.env.RLVR_TEST_PYTHON ?? [join(REPO, "python", ".venv", "bin", "python"), "/work/main/python/.venv/bin/python"].find((p) => existsSync(p)) ?? "python3";
const hasModel = existsSync(join(MODEL, "tokenizer.json"));
const hasTransformers = spawnSync(PY, ["-c", "import transformers"], { encoding: "utf8" }).status === 0;
const skip = !hasModel ? `no real model at ${MODEL} (run \`rlvr setup model smollm2-135m-instruct\` or set RLVR_REAL_MODEL)` : !hasTransformers ? `${PY} lacks transformers (set RLVR_TEST_PYTHON)` : false;

const CASES: ParityCase[] = [
  { row: { prompt: "Tom has 3 apples and buys 12 more. How many apples does he have?" }, messages: [{ role: "user", content: "Tom has 3 apples and buys 12 more. How many apples does he have?" }] },
  {
    row: { prompt: "What is 7 times 8? Put the answer in \\boxed{}.", system: "You are a careful math tutor." },
    messages: [{ role: "system", content: "You are a careful math tutor." }, { role: "user", content: "What is 7 times 8? Put the answer in \\boxed{}." }],
  },
  {
    row: { messages: [{ role: "user", content: "2+2?" }, { role: "assistant", content: "4" }, { role: "user", content: "And 40 + 2 = ?" }] },
    messages: [{ role: "user", content: "2+2?" }, { role: "assistant", content: "4" }, { role: "user", content: "And 40 + 2 = ?" }],
  },
];

/** transformers' ids: apply_chat_template(…, tokenize=True) per chat, and tok(text) per text. */
function transformersIds(chats: unknown[], texts: string[]): { chat: number[][]; text: number[][] } {
  const r = spawnSync(PY, ["-c", `
import sys, json
from transformers import AutoTokenizer
tk = AutoTokenizer.from_pretrained(sys.argv[1])
chats, texts = json.loads(sys.argv[2]), json.loads(sys.argv[3])
def ids(x):
    return list(x["input_ids"] if hasattr(x, "keys") else x)
print(json.dumps({"chat": [ids(tk.apply_chat_template(m, add_generation_prompt=True, tokenize=True)) for m in chats],
                  "text": [tk(t)["input_ids"] for t in texts]}))
`, MODEL, JSON.stringify(chats), JSON.stringify(texts)], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test("SmolLM2 chat prompts: identical ids in train, sample, eval and serve, equal to transformers' apply_chat_template", { skip }, async () => {
  const tok = await HfTokenizer.load(MODEL);
  assert.deepEqual([tok.bosId, tok.eosId, endOfTurnId(tok)], [1, 2, 2], "bos <|im_start|>, eos = end of turn <|im_end|>");
  assert.equal(tok.decode([...tok.encode("\\boxed{42}", { addSpecialTokens: false }), 2]), "\\boxed{42}", "the verifier sees the reply without <|im_end|>");
  const ref = transformersIds(CASES.map((c) => c.messages), []).chat;
  for (const r of ref) assert.ok(r[0] === 1 && r[1] !== 1, "transformers' prompt starts with one <|im_start|>");
  const ids = await promptIdsEverywhere(MODEL, CASES, { chat: true });
  assert.deepEqual(ids.train, ref, "train");
  assert.deepEqual(ids.sample, ref, "sample");
  assert.deepEqual(ids.eval, ref, "eval");
  assert.deepEqual(ids.serve, ref, "serve");
});

test("SmolLM2 text prompts (data.chat off): ids equal transformers' tok(text) — add_special_tokens adds no BOS", { skip }, async () => {
  const texts = ["What is 2+3?", "  12 + 30 = "];
  const ref = transformersIds([], texts).text;
  const ids = await promptIdsEverywhere(MODEL, texts.map((t) => ({ row: { prompt: t }, messages: [] })), { chat: false });
  assert.deepEqual(ids.train, ref);
  assert.deepEqual(ids.sample, ref);
  assert.deepEqual(ids.eval, ref);
  assert.deepEqual(ids.serve, ref);
});
