/**
 * Upper bounds: sizes that cannot fit are refused when the config is read, naming the field,
 * before anything is allocated (groupSize: 1e9 used to grow until V8 aborted after 56 s at 4.5 GB).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, parseRunConfig } from "../../src/config/schema.ts";
import { checkRunMemory, estimateRunMemory, formatBytes } from "../../src/config/memory.ts";

const base = { model: { init: {} }, tokenizer: { type: "char", alphabet: "0123456789+=" }, data: { task: "addition" } };

function message(raw: unknown): string {
  const t0 = performance.now();
  try {
    parseRunConfig(raw, "run.yaml");
  } catch (e) {
    assert.ok(e instanceof ConfigError, `a ConfigError, got ${(e as Error).name}: ${(e as Error).message}`);
    assert.ok(performance.now() - t0 < 2000, "refused at once, before any allocation");
    return (e as Error).message;
  }
  assert.fail("no error");
}

test("each size field has an upper bound, checked by the schema", () => {
  const cases: [unknown, string][] = [
    [{ ...base, rl: { steps: 1, groupSize: 1e9 } }, "rl.groupSize: Too big: expected number to be <=4096, got 1000000000"],
    [{ ...base, rl: { steps: 1, promptsPerStep: 1e9 } }, "rl.promptsPerStep: Too big: expected number to be <=65536, got 1000000000"],
    [{ ...base, rl: { steps: 1, maxNewTokens: 1e9 } }, "rl.maxNewTokens: Too big: expected number to be <=1048576, got 1000000000"],
    [{ ...base, data: { task: "addition", trainSize: 1e9 } }, "data.trainSize: Too big: expected number to be <=10000000, got 1000000000"],
    [{ ...base, data: { task: "addition", testSize: 1e9 } }, "data.testSize: Too big: expected number to be <=1000000, got 1000000000"],
    [{ ...base, model: { init: { hiddenSize: 1e9 } } }, "model.init.hiddenSize: Too big: expected number to be <=65536, got 1000000000"],
    [{ ...base, model: { init: { numLayers: 1e9 } } }, "model.init.numLayers: Too big: expected number to be <=1024, got 1000000000"],
    [{ ...base, model: { init: { maxPositionEmbeddings: 1e9 } } }, "model.init.maxPositionEmbeddings: Too big: expected number to be <=1048576, got 1000000000"],
    [{ ...base, sft: { steps: 1, batchSize: 1e9 } }, "sft.batchSize: Too big: expected number to be <=1048576, got 1000000000"],
    [{ ...base, eval: { samples: 1e9 } }, "eval.samples: Too big: expected number to be <=4096, got 1000000000"],
  ];
  for (const [raw, want] of cases) assert.equal(message(raw), `config error in run.yaml at ${want}`);
});

test("sizes within their bounds that together cannot fit are refused with the field to lower", () => {
  const gib = 2 ** 30;
  // 65536 prompts × 4096 responses: a quarter of a billion sequences per step.
  const step = message({ ...base, rl: { steps: 1, promptsPerStep: 65536, groupSize: 4096 } });
  assert.match(step, /^config error in run\.yaml at rl\.promptsPerStep: these sizes need at least [\d.]+ TiB of memory \(largest part: 268435456 sequences × 16 tokens in one forward\/backward pass, [\d.]+ TiB\), more than this machine's [\d.]+ GiB; lower rl\.promptsPerStep$/);
  const model = message({ ...base, model: { init: { hiddenSize: 65536, numLayers: 1024, numHeads: 64 } } });
  assert.match(model, /^config error in run\.yaml at model\.init\.hiddenSize: these sizes need at least .* \(largest part: a model of 5\.72e\+13 parameters/);
  // The check uses the machine's memory: the same config fits a large machine and not a small one.
  const cfg = { model: { init: { hiddenSize: 1024, numLayers: 24, numHeads: 16, maxPositionEmbeddings: 512 } }, tokenizer: { type: "char", alphabet: "0123456789" }, data: { task: "addition", trainSize: 1000, testSize: 10 }, rl: { promptsPerStep: 64, groupSize: 16, maxNewTokens: 256, miniBatches: 1 } };
  assert.equal(checkRunMemory(cfg, 1024 * gib, 64 * gib), null);
  const small = checkRunMemory(cfg, 32 * gib, 4 * gib)!;
  assert.equal(small.field, "rl.maxNewTokens");
  assert.match(small.message, /\(largest part: 1024 sequences × 256 tokens in one forward\/backward pass, 336 GiB\), more than this machine's 32\.0 GiB; lower rl\.maxNewTokens$/);
  // rl.microBatchSize bounds the pass: with it set, the same sizes fit and it is the field named when they do not.
  assert.equal(checkRunMemory({ ...cfg, rl: { ...cfg.rl, microBatchSize: 8 } }, 32 * gib, 4 * gib), null);
  assert.equal(checkRunMemory({ ...cfg, rl: { ...cfg.rl, microBatchSize: 1024 } }, 32 * gib, 4 * gib)!.field, "rl.microBatchSize");
});

test("the JavaScript parts are checked against V8's heap limit", () => {
  const r = checkRunMemory({ model: {}, data: { task: "addition", trainSize: 10_000_000, testSize: 1_000_000 } }, 2 ** 40, 2 ** 32);
  assert.deepEqual(r && r.field, "data.trainSize");
  assert.match(r!.message, /^these sizes need at least 4\.1 GiB of JavaScript heap \(largest part: 11000000 generated examples\), more than Node's limit of 4\.0 GiB; lower data\.trainSize \(or raise the limit with NODE_OPTIONS=--max-old-space-size=<MiB>\)$/);
});

test("the estimate is a lower bound: each part grows with its sizes, and default configs pass", () => {
  const total = (c: Parameters<typeof estimateRunMemory>[0]) => estimateRunMemory(c).reduce((s, t) => s + t.bytes, 0);
  const c = { model: { init: { hiddenSize: 64, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 64 } }, tokenizer: { type: "char", alphabet: "0123" }, data: { task: "addition", trainSize: 100, testSize: 10 }, rl: { promptsPerStep: 4, groupSize: 4, maxNewTokens: 8, miniBatches: 1 } };
  const t = total(c);
  for (const bigger of [
    { ...c, rl: { ...c.rl, groupSize: 8 } },
    { ...c, rl: { ...c.rl, promptsPerStep: 8 } },
    { ...c, rl: { ...c.rl, maxNewTokens: 16 } },
    { ...c, model: { init: { ...c.model.init, hiddenSize: 128 } } },
    { ...c, model: { init: { ...c.model.init, numLayers: 3 } } },
    { ...c, data: { ...c.data, trainSize: 200 } },
  ]) assert.ok(total(bigger) > t);
  // 64-wide, 2 layers, 8-char vocabulary: 2·64·64·2 + 2·64·64·2 + 3·64·192·2 + 2·64·2 + 8·64 + 64 parameters.
  const params = 2 * (2 * 64 * 64 + 2 * 64 * 64 + 3 * 64 * 192 + 2 * 64) + 8 * 64 + 64;
  assert.equal(estimateRunMemory(c)[0]!.bytes, params * 4 * 5);
  parseRunConfig({ ...base, rl: { steps: 1 }, sft: { steps: 1 } });
  assert.equal(formatBytes(1536), "1.5 KiB");
});
