/**
 * `rlvr eval` on the imported SmolLM2-135M-Instruct through each local engine: the torch engine,
 * and the embedded engine (which refuses to train this model but loads it inference-only for
 * evaluation), and vLLM (a local server fed by the torch engine); greedy responses agree.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runEval, type EvalCommandOptions } from "../../src/cli/commands/eval.ts";
import { realModelDir, testPython } from "./helpers/real.ts";

test("rlvr eval --engine torch and --engine embedded on the real model: same greedy responses", async () => {
  process.env.RLVR_PYTHON ??= testPython();
  const dir = realModelDir();
  const o: EvalCommandOptions = { task: "addition", difficulty: "1", verifier: "math", n: 2, samples: 1, temperature: 0, topP: 1, maxNewTokens: 8, seed: 1, template: "plain", bootstrap: 0, level: 0.95 };
  type Doc = { result: { prompts: number; outcomes: { samples: { response: string }[] }[] } };
  const responses = async (engine: string) => ((await runEval(dir, { ...o, engine }, () => {})) as Doc).result.outcomes.map((p) => p.samples[0]!.response);
  const viaTorch = await responses("torch");
  const viaEmbedded = await responses("embedded");
  assert.equal(viaTorch.length, 2);
  assert.ok(viaTorch.every((r) => r.length > 0), JSON.stringify(viaTorch));
  assert.deepEqual(viaEmbedded, viaTorch);
});

test("rlvr eval --engine vllm on the real model: vLLM's greedy responses equal the torch engine's", { timeout: 15 * 60_000 }, async () => {
  process.env.RLVR_PYTHON ??= testPython();
  const dir = realModelDir();
  const o: EvalCommandOptions = { task: "word-problems", difficulty: "1", n: 4, samples: 1, temperature: 0, topP: 1, maxNewTokens: 24, seed: 1, template: "plain", chat: true, bootstrap: 0, level: 0.95 };
  type Doc = { result: { accuracy: number; outcomes: { samples: { response: string }[] }[] } };
  const run = async (engine: string) => (await runEval(dir, { ...o, engine }, () => {})) as Doc;
  const viaTorch = await run("torch");
  const viaVllm = await run("vllm");
  const texts = (d: Doc) => d.result.outcomes.map((p) => p.samples[0]!.response);
  assert.equal(texts(viaVllm).length, 4);
  assert.ok(texts(viaTorch).every((r) => r.length > 0), JSON.stringify(texts(viaTorch)));
  assert.deepEqual(texts(viaVllm), texts(viaTorch));
  assert.equal(viaVllm.result.accuracy, viaTorch.result.accuracy);
});
