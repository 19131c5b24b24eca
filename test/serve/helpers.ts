// A tiny random char-level model saved as a run directory (config.yaml + checkpoints/final), for
// the serve tests. The alphabet covers the plain chat layout ("user: ...\nassistant: ").
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";

export const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 :+-*=?.,\n<>{}\"_/";

/** Write a tiny random model as `<root>/<name>`; returns the run directory. */
export async function makeTinyRun(root: string, o: { name?: string; seed?: number; maxPositionEmbeddings?: number; hiddenSize?: number } = {}): Promise<string> {
  const tokenizer = new CharTokenizer({ alphabet: ALPHABET });
  const h = o.hiddenSize ?? 16;
  const engine = await EmbeddedEngine.create(
    { modelType: "llama", vocabSize: tokenizer.vocabSize, hiddenSize: h, intermediateSize: 2 * h, numLayers: 1, numHeads: 2, numKvHeads: 2, headDim: h / 2, rmsNormEps: 1e-5, ropeTheta: 10000, maxPositionEmbeddings: o.maxPositionEmbeddings ?? 64, tieWordEmbeddings: true, attentionBias: false, bosTokenId: tokenizer.bosId, eosTokenId: tokenizer.eosId },
    { seed: o.seed ?? 1, tokenizer, modelId: "tiny" },
  );
  const run = join(root, o.name ?? "tiny-run");
  mkdirSync(run, { recursive: true });
  await engine.save(join(run, "checkpoints", "final"));
  await engine.close();
  // A minimal run config (rlvr eval reads its prompt format and reward from it).
  writeFileSync(join(run, "config.yaml"), "seed: 1\nmodel: { path: checkpoints/final }\ndata: { task: addition }\n");
  return run;
}
