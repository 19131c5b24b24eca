// The real-model recipe: examples/real/smollm2-grpo.yaml is the same run as
// `rlvr quickstart --model smollm2-135m-instruct` (src/recipes/real.ts), and a catalogue name in
// model.path resolves to where `rlvr setup model` imports it (or fails naming the setup command).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { loadRunConfig, parseRunConfig } from "../../src/config/schema.ts";
import { defaultModelDir } from "../../src/engines/catalog.ts";
import { openEngine } from "../../src/engines/open.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";
import { realRecipeConfig } from "../../src/recipes/real.ts";

const YAML = resolve(import.meta.dirname, "../../examples/real/smollm2-grpo.yaml");
const LORA_YAML = resolve(import.meta.dirname, "../../examples/real/smollm2-grpo-lora.yaml");

test("examples/real/smollm2-grpo.yaml is the recipe's config (same model, data, rl and eval blocks)", () => {
  const fromYaml = loadRunConfig(YAML);
  const ours = parseRunConfig(realRecipeConfig({ out: fromYaml.out, modelPath: fromYaml.model.path!, steps: fromYaml.rl!.steps, seed: fromYaml.seed }, fromYaml.data.train!, fromYaml.data.test!), "recipe");
  assert.deepEqual(ours, fromYaml);
  assert.equal(fromYaml.model.path, defaultModelDir("smollm2-135m-instruct"), "a catalogue name resolves to the setup directory");
  assert.equal(fromYaml.data.chat, true);
});

test("examples/real/smollm2-grpo-lora.yaml is the recipe with --lora; the embedded engine always trains LoRA", () => {
  const fromYaml = loadRunConfig(LORA_YAML);
  const o = { out: fromYaml.out, modelPath: fromYaml.model.path!, steps: fromYaml.rl!.steps, seed: fromYaml.seed };
  const ours = parseRunConfig(realRecipeConfig({ ...o, lora: true }, fromYaml.data.train!, fromYaml.data.test!), "recipe");
  assert.deepEqual(ours, fromYaml);
  assert.equal(fromYaml.model.lora?.rank, 16);
  assert.equal(fromYaml.rl!.lr, 1e-3);
  const embedded = parseRunConfig(realRecipeConfig({ ...o, engine: "embedded" }, fromYaml.data.train!, fromYaml.data.test!), "recipe");
  assert.deepEqual(embedded, { ...fromYaml, model: { ...fromYaml.model, engine: "embedded" } });
  const full = parseRunConfig(realRecipeConfig(o, fromYaml.data.train!, fromYaml.data.test!), "recipe");
  assert.equal(full.model.lora, undefined, "the torch engine fine-tunes every weight unless asked for LoRA");
  assert.equal(full.rl!.lr, 1e-5);
});

test("model.path: a catalogue name that is not set up fails in one line with the setup command", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-catalog-"));
  const prev = process.env.RLVR_CACHE_DIR;
  try {
    process.env.RLVR_CACHE_DIR = join(dir, "cache");
    const raw = parse(readFileSync(YAML, "utf8"));
    writeFileSync(join(dir, "cfg.json"), JSON.stringify(raw));
    const cfg = loadRunConfig(join(dir, "cfg.json"));
    assert.equal(cfg.model.path, join(dir, "cache", "models", "smollm2-135m-instruct"));
    await assert.rejects(openEngine({ ...cfg.model, engine: "embedded" }, { tokenizer: new CharTokenizer({ alphabet: "0123456789" }) }), (e: Error) => {
      assert.equal(e.message.split("\n").length, 1);
      assert.match(e.message, /model\.path: directory .*smollm2-135m-instruct does not exist; run `rlvr setup model smollm2-135m-instruct` first/);
      return true;
    });
    // A folder of that name beside the config wins over the catalogue.
    writeFileSync(join(dir, "smollm2-135m-instruct"), "");
    assert.equal(loadRunConfig(join(dir, "cfg.json")).model.path, join(dir, "smollm2-135m-instruct"));
  } finally {
    if (prev === undefined) delete process.env.RLVR_CACHE_DIR;
    else process.env.RLVR_CACHE_DIR = prev;
    rmSync(dir, { recursive: true, force: true });
  }
});
