/**
 * The imported SmolLM2-135M-Instruct against transformers: token ids (plain text, digit strings,
 * chat markup), next-token log-probs of the torch engine and of the embedded engine (inference
 * load; its training load must refuse in one line), and a torch-engine checkpoint that still stops
 * at <|im_end|> when transformers generates from it.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadTokenizer } from "../../src/tokenizers/index.ts";
import type { Tokenizer } from "../../src/tokenizers/types.ts";
import type { Engine, TokenBatch } from "../../src/core/engine.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { hf, PROBE_STRINGS, realModelDir, testPython } from "./helpers/real.ts";

/**
 * Both engines are held to the held-out check's 1e-4. The embedded engine sums the log-normaliser
 * over the 49,152 logits in blocks (model.ts `logSoftmax`): jax-js's own sequential float32 sum put
 * it 1e-4–2.5e-4 off at every position alike (≈0 where p ≈ 1); transformers' own float32-vs-float64
 * gap on these sequences is 2.5e-5.
 */
const LOGPROB_TOL = 1e-4;
let dir: string;
let tok: Tokenizer;
let tmp: string;
before(async () => {
  dir = realModelDir();
  tok = await loadTokenizer(dir);
  tmp = await mkdtemp(join(tmpdir(), "rlvr-real-parity-"));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

test("token ids equal transformers' on plain text, digit strings and chat markup", () => {
  const ours = PROBE_STRINGS.map((s) => tok.encode(s));
  const theirs = hf<number[][]>("tokenize", dir, PROBE_STRINGS);
  for (let i = 0; i < PROBE_STRINGS.length; i++) assert.deepEqual(ours[i], theirs[i], JSON.stringify(PROBE_STRINGS[i]));
  // llama.cpp's smollm split: each digit alone, and a run of spaces before a digit stays one token.
  assert.deepEqual(tok.encode("a  1"), [81, 256, 33]);
  assert.deepEqual(tok.encode("12345"), [33, 34, 35, 36, 37]);
});

/** Two chat-formatted sequences of different lengths, right-padded into one batch. */
function chatBatch(): { batch: TokenBatch; seqs: number[][] } {
  const seqs = [
    "<|im_start|>user\nWhat is 17 + 25?<|im_end|>\n<|im_start|>assistant\n17 + 25 = 42.<|im_end|>",
    "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nName a prime above 100.<|im_end|>\n<|im_start|>assistant\n101<|im_end|>",
  ].map((s) => tok.encode(s));
  const T = Math.max(...seqs.map((s) => s.length));
  const tokens = new Int32Array(seqs.length * T).fill(2);
  seqs.forEach((s, b) => tokens.set(s, b * T));
  const lossMask = new Float32Array(seqs.length * T);
  seqs.forEach((s, b) => lossMask.fill(1, b * T + 1, b * T + s.length));
  return { batch: { batchSize: seqs.length, seqLen: T, tokens, lengths: Int32Array.from(seqs.map((s) => s.length)), lossMask }, seqs };
}

async function maxLogprobDiff(engine: Engine): Promise<number> {
  const { batch, seqs } = chatBatch();
  const ours = (await engine.score(batch, { model: "policy" })).logprobs;
  const theirs = hf<number[][]>("logprobs", dir, seqs);
  let worst = 0;
  seqs.forEach((s, b) => {
    for (let t = 1; t < s.length; t++) worst = Math.max(worst, Math.abs(ours[b * batch.seqLen + t]! - theirs[b]![t]!));
  });
  return worst;
}

test(`torch engine: next-token log-probs within ${LOGPROB_TOL} of transformers`, async () => {
  const e = await TorchEngine.fromPretrained(dir, { python: testPython(), tokenizer: tok, device: "cpu", onStderr: () => {} });
  try {
    const d = await maxLogprobDiff(e);
    console.log(`# torch engine max |Δ log p| = ${d.toExponential(2)}`);
    assert.ok(d <= LOGPROB_TOL, `max |Δ log p| = ${d}`);
  } finally {
    await e.close();
  }
});

test(`embedded engine: training load refuses in one line; inference load matches transformers' log-probs within ${LOGPROB_TOL}`, async () => {
  await assert.rejects(EmbeddedEngine.fromPretrained(dir, { tokenizer: tok }), (err: Error) => {
    assert.ok(!err.message.includes("\n"), err.message);
    assert.match(err.message, /^model too large for the embedded engine: 134\.5M parameters .* use .* the torch engine/);
    return true;
  });
  const e = await EmbeddedEngine.fromPretrained(dir, { tokenizer: tok, inferenceOnly: true });
  try {
    const d = await maxLogprobDiff(e);
    console.log(`# embedded engine max |Δ log p| = ${d.toExponential(2)}`);
    assert.ok(d <= LOGPROB_TOL, `max |Δ log p| = ${d}`);
  } finally {
    await e.close();
  }
});

test("a torch-engine checkpoint after an update keeps generation_config and the chat template: transformers stops at <|im_end|>", async () => {
  const e = await TorchEngine.fromPretrained(dir, { python: testPython(), tokenizer: tok, device: "cpu", onStderr: () => {} });
  const ckpt = join(tmp, "step-1");
  try {
    const { batch } = chatBatch();
    await e.forwardBackward(batch, (s) => ({ loss: 0, dLogprobs: new Float32Array(s.logprobs.length).fill(-1e-3), metrics: {} }));
    await e.optimStep({ lr: 1e-6 });
    await e.save(ckpt);
  } finally {
    await e.close();
  }
  const gen = JSON.parse(await readFile(join(ckpt, "generation_config.json"), "utf8")) as Record<string, unknown>;
  assert.deepEqual([gen.bos_token_id, gen.eos_token_id, gen.pad_token_id], [1, 2, 2]);
  const chats = [[{ role: "user", content: "What is 2 + 2? Answer with the number only." }], [{ role: "user", content: "Say hello." }]];
  const maxNew = 48;
  for (const d of [dir, ckpt]) {
    const outs = hf<number[][]>("generate", d, { chats, max_new_tokens: maxNew });
    for (const o of outs) {
      assert.ok(o.length < maxNew && o.at(-1) === 2, `${d}: generation must end at <|im_end|> (id 2) before ${maxNew} tokens: ${JSON.stringify(o)}`);
    }
  }
});
