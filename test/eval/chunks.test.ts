// evaluate() splits a large evaluation into sample calls of whole prompts (chunkSequences), the
// call from prompt i seeded seed + i·n: with a sampler that seeds sample j of prompt i with
// seed + i·n + j (vLLM's convention, which the colocated and server samplers follow) the result
// equals one call's exactly, and onProgress reports each call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CharTokenizer } from "../../src/tokenizers/char.ts";
import { evaluate } from "../../src/eval/accuracy.ts";
import type { Engine, SampleRequest, SampleResult } from "../../src/core/engine.ts";
import type { Example } from "../../src/core/example.ts";
import { Rng } from "../../src/util/rng.ts";

const tok = new CharTokenizer({ alphabet: "0123456789" });

/** A sampler whose sample j of prompt i depends only on (seed + i·n + j): one digit, "7" one time in three. */
function seededPerSample(calls: number[]): Engine {
  return {
    sample: async (r: SampleRequest): Promise<SampleResult[]> => {
      calls.push(r.prompts.length * r.n);
      return r.prompts.flatMap((_, i) =>
        Array.from({ length: r.n }, (_, j) => {
          const u = new Rng((r.seed ?? 0) + i * r.n + j).next();
          const digit = r.temperature === 0 ? 7 : Math.floor(u * 10) % 3 === 0 ? 7 : Math.floor(u * 10);
          return { promptIndex: i, tokens: Int32Array.from([4 + digit, tok.eosId]), logprobs: new Float32Array(2), stopReason: "completed" as const };
        }),
      );
    },
  } as unknown as Engine;
}

test("a chunked evaluation equals one call; calls hold whole prompts; progress is reported", async () => {
  const examples: Example[] = Array.from({ length: 37 }, (_, i) => ({ id: `e${i}`, task: "t", prompt: String(i % 10), answer: "7" }));
  const ctx = (calls: number[]) => ({
    engine: seededPerSample(calls),
    tokenizer: tok,
    encodePrompt: (ex: Example) => tok.encode(ex.prompt),
    verify: (text: string) => ({ correct: text.trim() === "7", reward: text.trim() === "7" ? 1 : 0, extracted: text.trim() }),
  });
  const o = { n: 8, temperature: 1, maxNewTokens: 2, seed: 11, greedy: true, bootstrap: 0, keepOutcomes: true };
  const one: number[] = [];
  const whole = await evaluate(ctx(one) as never, examples, { ...o, chunkSequences: 10_000 });
  const many: number[] = [];
  const progress: [number, number][] = [];
  const chunked = await evaluate(ctx(many) as never, examples, { ...o, chunkSequences: 40, onProgress: (d, t) => progress.push([d, t]) });
  assert.deepEqual(one, [296, 37]);
  assert.deepEqual(many.slice(0, 8), [40, 40, 40, 40, 40, 40, 40, 16], "5 prompts × 8 a call, the rest last");
  assert.deepEqual(chunked, whole);
  assert.ok(whole.passAtK["pass@8"]! > whole.passAtK["pass@1"]! && whole.passAtK["pass@1"]! < 1, "the samples vary (the check can fail)");
  assert.deepEqual(progress.slice(0, 8).map(([d]) => d), [40, 80, 120, 160, 200, 240, 280, 296]);
  assert.ok(progress.every(([, t]) => t === 296 || t === 37));
});
