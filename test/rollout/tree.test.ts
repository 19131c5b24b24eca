import { test } from "node:test";
import assert from "node:assert/strict";
import { planForks, treeRollouts } from "../../src/rollout/tree.ts";
import { packSequences } from "../../src/core/sequence.ts";
import { ScriptedEngine } from "./fake-engine.ts";

// Prompts are [1, 10+p]; responses are random digits (ids 4..13) then EOS (2) with prob 0.2.
function randomPolicy(seed: number) {
  let s = seed >>> 0;
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  return () => (rnd() < 0.2 ? 2 : 4 + Math.floor(rnd() * 10));
}
// Entropy peaks at response position 3 (absolute position 5 with a 2-token prompt), then position 1.
const entropyAt = (_: readonly number[], t: number) => (t === 5 ? 3 : t === 3 ? 2 : 0.1 * t);
const prompts = [Int32Array.from([1, 10]), Int32Array.from([1, 11]), Int32Array.from([1, 12])];

test("planForks: highest entropy first, cycling over forkPoints, caps within the budget", () => {
  const H = [[0.1, 2.0, 0.3, 1.5, 0.2]];
  const plans = planForks(H, 4, 1000, 8, 2);
  assert.deepEqual(plans.map((p) => p.at), [1, 3, 1, 3]);
  assert.deepEqual(plans.map((p) => p.cap), [7, 5, 7, 5]);
  // A tight budget moves forks to later (cheaper) positions, keeps one token per later fork.
  const tight = planForks(H, 3, 10, 8, 3);
  assert.ok(tight.reduce((a, p) => a + p.cap, 0) <= 10);
  assert.equal(tight.length, 3);
  assert.ok(tight.every((p) => p.cap >= 1));
  // Nothing fits: the fork goes to the latest position with a capped suffix.
  const capped = planForks(H, 2, 3, 8, 2);
  assert.equal(capped.reduce((a, p) => a + p.cap, 0), 3);
  assert.ok(capped.every((p) => p.at === 4));
});

test("tree rollouts: G per prompt, forks share the root's prefix tokens and log-probs, at the highest-entropy position", async () => {
  const engine = new ScriptedEngine(randomPolicy(1), entropyAt);
  const G = 6;
  const res = await treeRollouts(engine, prompts, { groupSize: G, roots: 2, maxNewTokens: 10, temperature: 1, seed: 5, stopTokens: [2], forkPoints: 1 });
  assert.equal(res.trajectories.length, prompts.length * G);
  for (let p = 0; p < prompts.length; p++) {
    const group = res.trajectories.slice(p * G, (p + 1) * G);
    assert.ok(group.every((t) => t.promptIndex === p));
    const roots = group.slice(0, 2);
    for (const f of group.slice(2)) {
      const root = roots[f.forkOf!]!;
      const at = f.forkAt!;
      assert.deepEqual(Array.from(f.tokens.subarray(0, at)), Array.from(root.tokens.subarray(0, at)), "shared prefix tokens");
      assert.deepEqual(Array.from(f.logprobs.subarray(0, at)), Array.from(root.logprobs.subarray(0, at)), "shared prefix log-probs");
      assert.equal(f.sampledTokens, f.tokens.length - at);
      assert.equal(f.mask, undefined, "prefix tokens stay trained (mask 1)");
      // forkPoints 1: every fork sits at the single highest-entropy position of the prompt's roots.
      const best = roots.flatMap((r, j) => Array.from(r.tokens, (_, t) => ({ j, t, h: entropyAt([], t + 2) }))).sort((a, b) => b.h - a.h || a.j - b.j || a.t - b.t)[0]!;
      assert.deepEqual([f.forkOf, at], [best.j, best.t]);
    }
  }
  // The engine saw the fork prefixes as prompt + root prefix (shared, not re-sampled).
  const forkCalls = engine.calls.slice(1);
  const forkPrefixes = forkCalls.flatMap((c) => c.req.prompts.map((x) => Array.from(x)));
  const expected = res.trajectories.filter((t) => t.forkOf !== undefined).map((t) => [...prompts[t.promptIndex]!, ...t.tokens.subarray(0, t.forkAt!)]);
  assert.deepEqual(forkPrefixes.map(String).sort(), expected.map(String).sort());
});

test("tree rollouts: sampled tokens never exceed the budget (many budgets and seeds)", async () => {
  const G = 8;
  const maxNew = 10;
  const R = 2;
  for (const seed of [1, 2, 3, 4, 5]) {
    for (const budget of [R * maxNew + (G - R), 30, 40, 55, 80]) {
      const engine = new ScriptedEngine(randomPolicy(seed * 97 + budget), entropyAt);
      const res = await treeRollouts(engine, prompts, { groupSize: G, roots: R, maxNewTokens: maxNew, temperature: 1, seed, stopTokens: [2], budget });
      assert.equal(res.trajectories.length, prompts.length * G);
      for (let p = 0; p < prompts.length; p++) {
        const used = res.trajectories.slice(p * G, (p + 1) * G).reduce((a, t) => a + t.sampledTokens, 0);
        assert.ok(used <= budget, `seed ${seed} budget ${budget}: prompt ${p} sampled ${used}`);
      }
      // What the engine actually generated equals the trajectories' sampled tokens.
      const engineTokens = engine.calls.reduce((a, c) => a + c.results.reduce((b, r) => b + r.tokens.length, 0), 0);
      assert.equal(engineTokens, res.metrics["tree/sampled_tokens"]);
      for (const t of res.trajectories) assert.ok(t.tokens.length <= maxNew);
    }
  }
});

test("tree rollouts: trajectories pack with the shared prefix trained (loss mask 1) and reject an infeasible budget", async () => {
  const engine = new ScriptedEngine(randomPolicy(9), entropyAt);
  const res = await treeRollouts(engine, prompts.slice(0, 1), { groupSize: 4, roots: 1, maxNewTokens: 6, temperature: 1, seed: 1, stopTokens: [2] });
  const b = packSequences(res.trajectories.map((t) => ({ prompt: prompts[0]!, response: t.tokens })));
  for (let i = 0; i < 4; i++) for (let t = 2; t < b.lengths[i]!; t++) assert.equal(b.lossMask[i * b.seqLen + t], 1);
  await assert.rejects(treeRollouts(engine, prompts, { groupSize: 4, roots: 1, maxNewTokens: 6, temperature: 1, seed: 1, budget: 8 }), /budget 8 is below/);
  await assert.rejects(treeRollouts(engine, prompts, { groupSize: 4, roots: 4, maxNewTokens: 6, temperature: 1, seed: 1 }), /roots must be/);
});
