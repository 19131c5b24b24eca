/**
 * Capture training keeps its state: the learning rate warms up over the first updates (counted
 * across calls and restarts), `saveTo` saves weights + Adam moments + counters every `saveEvery`
 * updates and on close, and a server started from that save continues exactly: 3 updates, a
 * restart, 1 update give the same weights as 4 updates without a restart.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve, trainServed, readCaptureState, type Episode } from "../../src/serve/index.ts";
import { makeTinyRun } from "./helpers.ts";

const root = mkdtempSync(join(tmpdir(), "rlvr-capture-state-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** A fixed GRPO group of two one-turn episodes (the same data for every server). */
function episodes(k: number): Episode[] {
  const turn = (tokens: number[]) => ({ promptTokens: [1, 5 + k, 6, 7], tokens, logprobs: tokens.map(() => -3), policyVersion: 0, finishReason: "stop" as const });
  return [
    { id: `a${k}`, group: `g${k}`, turns: [turn([8, 9, 10])], reward: 1 },
    { id: `b${k}`, group: `g${k}`, turns: [turn([11, 12])], reward: 0 },
  ];
}
const opts = { lr: 0.01, warmupUpdates: 4, algorithm: { advantage: { name: "grpo" }, loss: { name: "ppo_clip" } } };

test("warm-up, save every n and on close, and a restart that continues exactly", { timeout: 120_000 }, async () => {
  const run = await makeTinyRun(root, { hiddenSize: 16 });
  // Without a restart: 4 updates.
  const straight = join(root, "straight");
  const a = await serve({ checkpoint: run, port: 0, capture: true, saveTo: straight });
  const lrs: number[] = [];
  for (let k = 0; k < 4; k++) lrs.push((await trainServed(a, opts, episodes(k)))!.metrics["lr"]!);
  assert.deepEqual(lrs.map((x) => +x.toFixed(6)), [0.0025, 0.005, 0.0075, 0.01]);
  await a.close(); // saves on close
  assert.deepEqual(readCaptureState(straight), { policyVersion: 4, updates: 4 });

  // 3 updates (saved after 2 by saveEvery, and on close after 3), a restart from the save, 1 more.
  const saved = join(root, "saved");
  const b = await serve({ checkpoint: run, port: 0, capture: true, saveTo: saved, saveEvery: 2 });
  for (let k = 0; k < 2; k++) await trainServed(b, opts, episodes(k));
  assert.deepEqual(readCaptureState(saved), { policyVersion: 2, updates: 2 });
  assert.ok(existsSync(join(saved, "optimizer.safetensors")));
  await trainServed(b, opts, episodes(2));
  await b.close();
  assert.deepEqual(readCaptureState(saved), { policyVersion: 3, updates: 3 });
  const c = await serve({ checkpoint: saved, port: 0, capture: true, saveTo: saved });
  assert.equal(c.policyVersion, 3);
  const last = await trainServed(c, opts, episodes(3));
  assert.equal(+last!.metrics["lr"]!.toFixed(6), 0.01, "the warm-up continues where it stopped");
  await c.close();
  assert.ok(readFileSync(join(saved, "model.safetensors")).equals(readFileSync(join(straight, "model.safetensors"))), "restart ≠ uninterrupted");
  assert.ok(readFileSync(join(saved, "optimizer.safetensors")).equals(readFileSync(join(straight, "optimizer.safetensors"))));
  await assert.rejects(serve({ checkpoint: run, port: 0, saveTo: saved }), /saveTo \(--save-to\) saves what capture training learns; start with capture: true/);
});
