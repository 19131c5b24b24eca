import { test } from "node:test";
import assert from "node:assert/strict";
import { parseRunConfig } from "../../src/config/schema.ts";
import { initSftState } from "../../src/trainer/sft.ts";
import type { RunContext } from "../../src/pipeline/context.ts";

function ctxWith(sft: Record<string, unknown>, trainSize: number): RunContext {
  const cfg = parseRunConfig({ seed: 4, model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2 } }, data: { task: "addition" }, sft: { steps: 10, ...sft } });
  return { cfg, train: Array.from({ length: trainSize }, (_, i) => ({ id: String(i), prompt: `${i}`, answer: `${i}` })) } as unknown as RunContext;
}

test("sft.examples: SFT cycles over the first N training examples only (a few demonstrations)", () => {
  const few = initSftState(ctxWith({ examples: 3 }, 10));
  assert.deepEqual([...few.order].sort((a, b) => a - b), [0, 1, 2]);
  const all = initSftState(ctxWith({}, 10));
  assert.deepEqual([...all.order].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.notDeepEqual(all.order, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], "the order is a seeded shuffle");
  const more = initSftState(ctxWith({ examples: 50 }, 10));
  assert.equal(more.order.length, 10, "more demonstrations than examples: all of them");
  assert.throws(() => ctxWith({ examples: 0 }, 10), /sft\.examples/);
});
