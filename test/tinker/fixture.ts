/**
 * A tiny random Llama with a character tokenizer ("0"-"9", "+", "=", " "), saved in the Hugging
 * Face layout: the local model the Tinker SDK tests train.
 */
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";

/** Write the tiny model to `dir` (config.json, model.safetensors, tokenizer files). */
export async function writeTinyModel(dir: string, seed = 0): Promise<void> {
  const tokenizer = new CharTokenizer({ alphabet: "0123456789+= abc" });
  const engine = await EmbeddedEngine.create(
    { modelType: "llama", vocabSize: tokenizer.vocabSize, hiddenSize: 32, intermediateSize: 64, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 8, rmsNormEps: 1e-5, ropeTheta: 10000, maxPositionEmbeddings: 64, tieWordEmbeddings: false, attentionBias: false },
    { seed, tokenizer, modelId: "tiny" },
  );
  await engine.save(dir);
  await engine.close();
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  await writeTinyModel(process.argv[2] ?? "/tmp/tiny-tinker");
}
