import { test } from "node:test";
import assert from "node:assert/strict";
import { applyHints, hintLength } from "../../src/rollout/hints.ts";
import { asTrajectory } from "../../src/rollout/types.ts";
import { packSequences } from "../../src/core/sequence.ts";
import type { Verdict } from "../../src/tasks/types.ts";
import type { Example } from "../../src/core/example.ts";
import { ScriptedEngine, scripted, tok } from "./fake-engine.ts";

const examples: Example[] = [
  { id: "a", prompt: "1+1=", answer: "2", task: "t" }, // solved without hints
  { id: "b", prompt: "12*3=", answer: "1234", task: "t" }, // solved once 2 answer tokens are given
  { id: "c", prompt: "9*9=", answer: "8181", task: "t", solution: "81 81" }, // never solved
];
const prompts = examples.map((e) => Int32Array.from([tok.bosId!, ...tok.encode(e.prompt, { addSpecialTokens: false })]));
const promptLen = (prefix: readonly number[]) => prefix.indexOf(tok.encode("=", { addSpecialTokens: false })[0]!) + 1;
// The "model": answers "2" to 1+1; to 12*3 it completes the answer only from a 2-character prefix of it; else writes 7.
const policy = scripted(promptLen, (resp) => {
  if (resp.startsWith("12")) return "1234";
  if (resp === "" || resp === "7") return "7";
  return resp; // anything else: stop
});
const verify = async (texts: readonly string[], exs: readonly Example[]) => ({
  verdicts: texts.map((t, i): Verdict => ({ correct: t === exs[i]!.answer, reward: t === exs[i]!.answer ? 1 : 0, extracted: t, reason: "" })),
  events: {},
});

test("hintLength: round(f·S) within [1, S−1]; no hint for one-token solutions", () => {
  assert.equal(hintLength(0.25, 4), 1);
  assert.equal(hintLength(0.5, 4), 2);
  assert.equal(hintLength(0.75, 4), 3);
  assert.equal(hintLength(0.99, 4), 3);
  assert.equal(hintLength(0.01, 4), 1);
  assert.equal(hintLength(0.5, 1), 0);
});

test("hints: zero-accuracy groups get a growing hint; hint tokens carry loss mask 0 and stay a token prefix of the solution", async () => {
  const engine = new ScriptedEngine((prefix, row) => {
    const p = prefix.slice(promptLen(prefix));
    if (prefix.length >= 3 && tok.decode(prefix.slice(1, promptLen(prefix))) === "1+1=") return p.length === 0 ? tok.encode("2", { addSpecialTokens: false })[0]! : tok.eosId;
    return policy(prefix, row);
  });
  const G = 3;
  const first = await engine.sample({ prompts, n: G, maxNewTokens: 6, temperature: 1, seed: 1, stopTokens: [tok.eosId] });
  const trajs = first.map(asTrajectory);
  const v0 = await verify(trajs.map((t) => tok.decode(t.tokens)), trajs.map((t) => examples[t.promptIndex]!));
  assert.deepEqual(v0.verdicts.map((v) => v.correct), [true, true, true, false, false, false, false, false, false]);
  const res = await applyHints(engine, tok, examples, prompts, trajs, v0.verdicts, verify, { groupSize: G, maxNewTokens: 6, maxSeqLen: 64, temperature: 1, seed: 2, stopTokens: [tok.eosId] });
  // Group a: untouched.
  for (let j = 0; j < G; j++) assert.equal(res.trajectories[j], trajs[j]);
  // Group b: 0.25 → 1 token ("1") fails, 0.5 → "12" solves; the hinted group replaces the original.
  for (let j = G; j < 2 * G; j++) {
    const t = res.trajectories[j]!;
    assert.equal(t.hintTokens, 2);
    assert.equal(tok.decode(t.tokens), "1234");
    assert.deepEqual(Array.from(t.tokens.subarray(0, 2)), tok.encode("12", { addSpecialTokens: false }));
    assert.deepEqual(Array.from(t.mask!), [0, 0, 1, 1, 1]); // "12" hint | "34" + EOS sampled
    assert.deepEqual(Array.from(t.logprobs.subarray(0, 2)), [0, 0]);
    assert.equal(t.sampledTokens, 3);
    assert.ok(res.verdicts[j]!.correct);
    // Packed for training: the hint positions have loss mask 0.
    const b = packSequences([{ prompt: prompts[1]!, response: t.tokens, mask: t.mask }]);
    const P = prompts[1]!.length;
    assert.deepEqual(Array.from(b.lossMask.subarray(P, P + 5)), [0, 0, 1, 1, 1]);
    assert.deepEqual(Array.from(b.lossMask.subarray(0, P)), new Array(P).fill(0));
  }
  // Group c: never solved at any fraction → keeps its original unhinted responses.
  for (let j = 2 * G; j < 3 * G; j++) assert.equal(res.trajectories[j], trajs[j]);
  assert.equal(res.metrics["hints/zero_acc_groups"], 2);
  assert.equal(res.metrics["hints/hinted_groups"], 2);
  assert.equal(res.metrics["hints/solved_groups"], 1);
  assert.equal(res.metrics["hints/fraction_mean"], 0.5);
  assert.equal(res.metrics["hints/hint_tokens"], 2 * G);
  // Engine calls beyond the first: group b at 0.25 and 0.5 (+ c), c at 0.75; c's solution "81 81" is 5 tokens (hints of 1, 3, 4).
  const hintPrefixes = engine.calls.slice(1).flatMap((c) => c.req.prompts.map((p) => tok.decode(p)));
  assert.ok(hintPrefixes.includes("12*3=1") && hintPrefixes.includes("12*3=12"));
  assert.ok(hintPrefixes.includes("9*9=8") && hintPrefixes.includes("9*9=81 ") && hintPrefixes.includes("9*9=81 8"));
  // Sampled-token accounting covers every hinted re-sample.
  const resampled = engine.calls.slice(1).reduce((a, c) => a + c.results.reduce((s, r) => s + r.tokens.length, 0), 0);
  assert.equal(res.metrics["hints/sampled_tokens"], resampled);
});
