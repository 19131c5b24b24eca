// A Hugging Face tokenizer with a chat template (the byte-level BPE fixture, Qwen-style
// <|im_start|> layout): the served prompt is the template's rendering, token for token.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import OpenAI from "openai";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { HfTokenizer } from "../../src/tokenizers/index.ts";
import { serve } from "../../src/serve/server.ts";

test("chat through a Hugging Face chat template: prompt ids are the template's tokens; samples equal engine.sample", async () => {
  const tokenizer = await HfTokenizer.load(join(import.meta.dirname, "..", "fixtures", "tokenizers", "byte-bpe"));
  const engine = await EmbeddedEngine.create(
    { modelType: "qwen2", vocabSize: tokenizer.vocabSize, hiddenSize: 16, intermediateSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 2, headDim: 8, rmsNormEps: 1e-5, ropeTheta: 10000, maxPositionEmbeddings: 128, tieWordEmbeddings: true, attentionBias: true, bosTokenId: tokenizer.bosId, eosTokenId: tokenizer.eosId },
    { seed: 2, tokenizer, modelId: "bpe" },
  );
  const server = await serve({ engine, tokenizer, port: 0, modelName: "bpe" });
  try {
    const client = new OpenAI({ baseURL: server.url, apiKey: "unused", maxRetries: 0 });
    const messages = [{ role: "user" as const, content: "hello there" }];
    const r = (await client.chat.completions.create({ model: "bpe", messages, seed: 4, max_tokens: 8, return_token_ids: true } as never)) as unknown as { prompt_token_ids: number[]; choices: { token_ids: number[]; message: { content: string } }[] };
    const text = tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true });
    assert.equal(text, "<|im_start|>system\nYou are a careful assistant.<|im_end|>\n<|im_start|>user\nhello there<|im_end|>\n<|im_start|>assistant\n");
    assert.deepEqual(r.prompt_token_ids, tokenizer.encode(text));
    assert.equal(tokenizer.decode(r.prompt_token_ids, { skipSpecial: false }), text);
    const own = await engine.sample({ prompts: [Int32Array.from(r.prompt_token_ids)], n: 1, seed: 4, temperature: 1, topP: 1, maxNewTokens: 8, stopTokens: [tokenizer.eosId] });
    assert.deepEqual(r.choices[0]!.token_ids, Array.from(own[0]!.tokens));
    assert.equal(r.choices[0]!.message.content, tokenizer.decode(own[0]!.tokens));
  } finally {
    await server.close();
    await engine.close();
  }
});
