/**
 * A tiny random Llama with a character tokenizer ("0"-"9", "+", "=", " "), saved in the Hugging
 * Face layout: the local model the Tinker SDK tests train.
 */
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";

/** The printable ASCII characters and a newline: an alphabet for chat renderers' text ("User: ...\n\n"). */
export const ASCII_ALPHABET = "\n" + Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");

/**
 * Write the tiny model to `dir` (config.json, model.safetensors, tokenizer files). `alphabet`: its
 * character tokenizer's (default the digits, "+", "=", " " and "abc"); `context`: its context
 * length in tokens (default 64).
 */
export async function writeTinyModel(dir: string, seed = 0, o: { alphabet?: string; context?: number } = {}): Promise<void> {
  const tokenizer = new CharTokenizer({ alphabet: o.alphabet ?? "0123456789+= abc" });
  const engine = await EmbeddedEngine.create(
    { modelType: "llama", vocabSize: tokenizer.vocabSize, hiddenSize: 32, intermediateSize: 64, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 8, rmsNormEps: 1e-5, ropeTheta: 10000, maxPositionEmbeddings: o.context ?? 64, tieWordEmbeddings: false, attentionBias: false },
    { seed, tokenizer, modelId: "tiny" },
  );
  await engine.save(dir);
  await engine.close();
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  await writeTinyModel(process.argv[2] ?? "/tmp/tiny-tinker");
}
