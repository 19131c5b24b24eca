/**
 * Loading a model directory from bytes in memory (the browser page's path, `rlvr play --model`):
 * EmbeddedEngine.fromFiles scores exactly as fromPretrained on the same directory (plain and with a
 * LoRA on a frozen base), HfTokenizer.fromFiles gives HfTokenizer.load's ids, and a missing or
 * broken file is an error naming it.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { loraConfigSchema } from "../../src/engines/lora.ts";
import { HfTokenizer } from "../../src/tokenizers/index.ts";
import { randomBatch, Rng, tinyLlama } from "./helpers/tiny.ts";

const tmp = mkdtempSync(join(tmpdir(), "rlvr-from-files-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Every file of `dir`, name → bytes (what the page fetches). */
const filesOf = (dir: string) => Object.fromEntries(readdirSync(dir).map((f) => [f, new Uint8Array(readFileSync(join(dir, f)))]));

test("EmbeddedEngine.fromFiles scores as fromPretrained on the same directory, with and without LoRA", async () => {
  const cfg = tinyLlama();
  const src = await EmbeddedEngine.create(cfg, { seed: 5 });
  const dir = join(tmp, "ckpt");
  await src.save(dir);
  await src.close();
  const batch = randomBatch(new Rng(3), cfg.vocabSize, [6, 4], { promptLen: 1 });
  const lora = loraConfigSchema.parse({ rank: 4, baseDtype: "bfloat16" });
  for (const opts of [{}, { lora, seed: 2 }]) {
    const a = await EmbeddedEngine.fromPretrained(dir, opts);
    const b = await EmbeddedEngine.fromFiles(filesOf(dir), { ...opts, where: "mem" });
    try {
      assert.deepEqual((await b.score(batch, { model: "policy" })).logprobs, (await a.score(batch, { model: "policy" })).logprobs);
      assert.deepEqual(b.weightNames(), a.weightNames());
      assert.equal(b.info().dtype, a.info().dtype);
    } finally {
      await a.close();
      await b.close();
    }
  }
  const files = filesOf(dir);
  await assert.rejects(EmbeddedEngine.fromFiles({ "config.json": files["config.json"]! }, { where: "https://x/model" }), /https:\/\/x\/model\/model\.safetensors is missing/);
  await assert.rejects(EmbeddedEngine.fromFiles({ ...files, "config.json": new TextEncoder().encode("{oops") }, { where: "m" }), /model config error in m\/config\.json: not valid JSON/);
  const cut = files["model.safetensors"]!.subarray(0, files["model.safetensors"]!.length - 8);
  await assert.rejects(EmbeddedEngine.fromFiles({ ...files, "model.safetensors": cut }, { where: "m" }), /m\/model\.safetensors/);
});

test("HfTokenizer.fromFiles gives HfTokenizer.load's ids and special tokens; a missing tokenizer.json names it", async () => {
  const dir = join(import.meta.dirname, "..", "fixtures", "tokenizers", "byte-bpe");
  const a = await HfTokenizer.load(dir);
  const b = HfTokenizer.fromFiles(filesOf(dir), dir);
  for (const text of ["hello world", "12 + 30 = 42", "naïve café"]) assert.deepEqual(b.encode(text), a.encode(text));
  assert.deepEqual([b.vocabSize, b.eosId, b.bosId, b.padId, b.chatTemplate], [a.vocabSize, a.eosId, a.bosId, a.padId, a.chatTemplate]);
  assert.throws(() => HfTokenizer.fromFiles({}, "web/model"), /web\/model\/tokenizer\.json not found/);
  assert.throws(() => HfTokenizer.fromFiles({ "tokenizer.json": new TextEncoder().encode("[") }, "w"), /tokenizer error in w\/tokenizer\.json: not valid JSON/);
});
