// `rlvr eval --endpoint` against `rlvr serve` (the CLI, a child process) gives the same pass@k —
// and the same responses — as `rlvr eval` on the checkpoint, for the same seeds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runEval, type EvalCommandOptions } from "../../src/cli/commands/eval.ts";
import { repoRoot } from "../trainer/helpers.ts";
import { makeTinyRun } from "./helpers.ts";

/** Start `rlvr serve <run> --port 0`; resolves with its base URL and a stop function. */
function startServe(run: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [join(repoRoot, "bin", "rlvr.js"), "serve", run, "--port", "0"], { env: { ...process.env, RLVR_FROM_SOURCE: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`rlvr serve did not start in 120 s: ${err}`)), 120_000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = /rlvr serve: (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve({ url: m[1]!, stop: async () => void (child.kill("SIGTERM"), await exited) });
      }
    });
    child.once("exit", (code) => reject(new Error(`rlvr serve exited (${code}): ${err}`)));
  });
}

test("rlvr eval --endpoint (rlvr serve) equals rlvr eval on the checkpoint: same pass@k, same responses", async () => {
  const root = mkdtempSync(join(tmpdir(), "rlvr-eval-endpoint-"));
  let stop: (() => Promise<void>) | undefined;
  try {
    const run = await makeTinyRun(root, { maxPositionEmbeddings: 32 });
    const o: EvalCommandOptions = { task: "addition", difficulty: "1,2", verifier: "math", n: 6, samples: 4, temperature: 1, topP: 1, maxNewTokens: 4, seed: 3, template: "plain", bootstrap: 100, level: 0.9, greedy: true };
    const local = (await runEval(run, o, () => {})) as { result: { passAtK: Record<string, number>; outcomes: { samples: { response: string }[] }[] } };
    const s = await startServe(run);
    stop = s.stop;
    const remote = (await runEval(run, { ...o, endpoint: s.url }, () => {})) as typeof local;
    assert.deepEqual(remote.result.passAtK, local.result.passAtK);
    // The same server given as a bare origin (no /v1) answers the same.
    const origin = new URL(s.url).origin;
    const bare = (await runEval(run, { ...o, endpoint: origin + "/" }, () => {})) as typeof local;
    assert.deepEqual(bare.result.passAtK, local.result.passAtK);
    assert.deepEqual(
      remote.result.outcomes.map((p) => p.samples.map((x) => x.response)),
      local.result.outcomes.map((p) => p.samples.map((x) => x.response)),
    );
    // Sampling at temperature 1 gives varied responses, so the equality is not trivial.
    const distinct = new Set(local.result.outcomes.flatMap((p) => p.samples.map((x) => x.response)));
    assert.ok(distinct.size > 4, `only ${distinct.size} distinct responses`);
  } finally {
    await stop?.();
    rmSync(root, { recursive: true, force: true });
  }
});

test("rollout: {engine: openai} builds the OpenAI sampler; a missing field is named", async () => {
  const { rolloutEngineSchema } = await import("../../src/rollout/samplers/config.ts");
  const { createSampler } = await import("../../src/rollout/samplers/vllm.ts");
  const cfg = rolloutEngineSchema.parse({ engine: "openai", baseURL: "http://127.0.0.1:9/v1", model: "m" });
  const s = await createSampler(cfg, undefined as never, 1);
  assert.equal(s?.name, "openai");
  await assert.rejects(createSampler(rolloutEngineSchema.parse({ engine: "openai", model: "m" }), undefined as never, 1), /rollout\.baseURL/);
  assert.throws(() => rolloutEngineSchema.parse({ engine: "openai", baseURL: "localhost:8000" }), /http\(s\) URL/);
});
