/**
 * checkpointFiles (the browser page's download) gives the same bytes that saveCheckpoint writes to
 * disk for config.json, model.safetensors and the char tokenizer's files, and they load back.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { checkpointFiles } from "../../src/engines/embedded/checkpoint.ts";
import { CharTokenizer } from "../../src/tokenizers/char.ts";
import type { ModelConfig } from "../../src/engines/embedded/hf-config.ts";

test("checkpointFiles: the bytes saveCheckpoint writes, loadable by fromPretrained", async () => {
  const tokenizer = new CharTokenizer({ alphabet: "0123456789+=" });
  const config: ModelConfig = {
    modelType: "llama", vocabSize: tokenizer.vocabSize, hiddenSize: 16, intermediateSize: 32, numLayers: 2, numHeads: 2, numKvHeads: 1,
    headDim: 8, rmsNormEps: 1e-5, ropeTheta: 10000, maxPositionEmbeddings: 16, tieWordEmbeddings: false, attentionBias: false,
  };
  const engine = await EmbeddedEngine.create(config, { seed: 3, tokenizer });
  const dir = mkdtempSync(join(tmpdir(), "rlvr-ckpt-files-"));
  const copy = mkdtempSync(join(tmpdir(), "rlvr-ckpt-copy-"));
  try {
    await engine.save(dir);
    const files = await checkpointFiles(engine, tokenizer);
    assert.deepEqual(Object.keys(files), ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]);
    for (const [name, bytes] of Object.entries(files)) {
      assert.ok(Buffer.from(bytes).equals(readFileSync(join(dir, name))), `${name} differs from what save() wrote`);
      writeFileSync(join(copy, name), bytes);
    }
    const back = await EmbeddedEngine.fromPretrained(copy);
    for (const name of engine.weightNames()) assert.deepEqual(await back.getWeight(name), await engine.getWeight(name), name);
    await back.close();
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(copy, { recursive: true, force: true });
  }
});
