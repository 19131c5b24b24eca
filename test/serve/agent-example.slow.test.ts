// examples/agent: the agent (openai SDK only) trains its own tiny model through `rlvr serve` in
// capture mode; its held-out success rate must rise, within three minutes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../src/serve/server.ts";
import { trainAgent } from "../../examples/agent/train.ts";
import { makeTinyRun } from "./helpers.ts";

test("examples/agent: capture-mode training raises the agent's held-out success rate", { timeout: 300_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), "rlvr-agent-"));
  const run = await makeTinyRun(root, { hiddenSize: 64, maxPositionEmbeddings: 48 });
  const server = await serve({ checkpoint: run, port: 0, capture: true });
  try {
    const t0 = performance.now();
    const r = await trainAgent({ baseURL: server.url, steps: 60, log: () => {} });
    const s = (performance.now() - t0) / 1000;
    process.stderr.write(`agent: held-out success ${r.before} → ${r.after}; train reward ${r.rewards[0]!.toFixed(3)} → ${r.rewards.at(-1)!.toFixed(3)}; ${s.toFixed(0)} s\n`);
    assert.ok(r.after >= r.before + 0.3, `held-out success ${r.before} → ${r.after}`);
    const first = r.rewards.slice(0, 10).reduce((a, b) => a + b, 0) / 10;
    const last = r.rewards.slice(-10).reduce((a, b) => a + b, 0) / 10;
    assert.ok(last > first + 0.15, `train reward ${first} → ${last}`);
    assert.equal(server.policyVersion, 60);
    assert.ok(s < 180, `took ${s} s`);
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
});
