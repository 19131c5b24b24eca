/**
 * The server-mode vLLM sampler against two stand-in servers (node:http) that answer like vLLM
 * 0.32's OpenAI-compatible server: prompts spread across the URLs (prompt i → server i mod k),
 * the request carries token ids, seeds and sampling settings as vLLM expects, results come back
 * prompt-major with the sampler's log-probs and stop reasons, and a weight sync saves a checkpoint
 * and asks every server to reload it. The real vLLM runs in test/scale/vllm.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Engine } from "../../src/core/engine.ts";
import { VllmServerSampler } from "../../src/rollout/samplers/vllm.ts";
import { parseRunConfig } from "../../src/config/schema.ts";

interface Seen {
  path: string;
  body: Record<string, unknown>;
}

/**
 * How a stand-in misbehaves: "hang" answers nothing, not even /health (a server stopped with
 * SIGSTOP); "drop" closes the connection of completions requests (a server killed mid-request);
 * "dropSync" closes the connection of weight reloads (killed during a sync); "stall" never answers
 * completions but answers /health (a wedged request).
 */
type Fault = "none" | "hang" | "stall" | "drop" | "dropSync";

/** A stand-in server: completions of `n` tokens [prompt[0] + j, 7] (7 = a stop token) with log-prob -(j+1)/10. */
async function standIn(name: string, seen: Seen[], fault: { now: Fault } = { now: "none" }): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      seen.push({ path: req.url!, body });
      if (fault.now === "hang" || (fault.now === "stall" && req.url === "/v1/completions")) return;
      if ((fault.now === "drop" && req.url === "/v1/completions") || (fault.now === "dropSync" && req.url === "/collective_rpc")) return req.socket.destroy();
      res.setHeader("content-type", "application/json");
      if (req.url === "/health") return res.end("");
      if (req.url === "/v1/models") return res.end(JSON.stringify({ data: [{ id: `model-${name}` }] }));
      if (req.url === "/v1/completions") {
        const prompt = body.prompt as number[];
        const n = body.n as number;
        // Reverse order on purpose: the sampler must sort by index.
        const choices = Array.from({ length: n }, (_, j) => {
          const toks = j % 2 === 0 ? [prompt[0]! + j, 7] : [prompt[0]! + j, 3];
          return { index: j, token_ids: toks, logprobs: { token_logprobs: toks.map(() => -(j + 1) / 10) }, finish_reason: j % 2 === 0 ? "stop" : "length" };
        }).reverse();
        return res.end(JSON.stringify({ choices }));
      }
      if (req.url === "/collective_rpc") return res.end(JSON.stringify({ results: [{ tensors: 3 }] }));
      if (req.url === "/update_weight_version") return res.end(JSON.stringify({ success: true }));
      res.statusCode = 404;
      res.end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  server.closeAllConnections ??= () => undefined;
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

/** An engine whose save() writes a marker file (the sampler only saves through the contract). */
function savingEngine(saved: string[]): Engine {
  return {
    save: async (dir: string) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "config.json"), "{}");
      saved.push(dir);
    },
  } as unknown as Engine;
}

test("server sampler: prompts spread across servers, token ids in and out, prompt-major results, sync through a checkpoint", async () => {
  const seenA: Seen[] = [];
  const seenB: Seen[] = [];
  const a = await standIn("a", seenA);
  const b = await standIn("b", seenB);
  const syncDir = mkdtempSync(join(tmpdir(), "rlvr-sync-test-"));
  const saved: string[] = [];
  const engine = savingEngine(saved);
  const s = await VllmServerSampler.connect({ urls: [a.url + "/", b.url], syncDir }, engine);
  try {
    // connect() pushed the engine's weights to both servers; the loop still syncs before its first
    // collect (version -1), since an SFT stage may change the weights in between.
    assert.deepEqual(saved, [join(syncDir, "v0")]);
    assert.equal(s.version(), -1);
    for (const seen of [seenA, seenB]) {
      const rpc = seen.find((x) => x.path === "/collective_rpc");
      assert.deepEqual(rpc?.body, { method: "rlvr_load_weights", kwargs: { weights_path: join(syncDir, "v0") } });
    }
    const prompts = [Int32Array.from([10, 1]), Int32Array.from([20]), Int32Array.from([30, 2, 2])];
    const out = await s.sample({ prompts, n: 2, maxNewTokens: 4, temperature: 0.7, topP: 0.9, topK: 5, stopTokens: [7], seed: 100 });
    assert.equal(out.length, 6);
    assert.deepEqual(out.map((o) => o.promptIndex), [0, 0, 1, 1, 2, 2]);
    assert.deepEqual(out.map((o) => Array.from(o.tokens)), [[10, 7], [11, 3], [20, 7], [21, 3], [30, 7], [31, 3]]);
    assert.deepEqual(out.map((o) => o.stopReason), ["completed", "max_tokens", "completed", "max_tokens", "completed", "max_tokens"]);
    assert.ok(Math.abs(out[1]!.logprobs[0]! - -0.2) < 1e-6);
    // Prompts 0 and 2 went to server a, prompt 1 to server b, each with its own seed and the settings.
    const compA = seenA.filter((x) => x.path === "/v1/completions").map((x) => x.body);
    const compB = seenB.filter((x) => x.path === "/v1/completions").map((x) => x.body);
    assert.deepEqual(compA.map((x) => x.prompt).sort(), [[10, 1], [30, 2, 2]]);
    assert.deepEqual(compB.map((x) => x.prompt), [[20]]);
    assert.deepEqual(compB[0], {
      model: "model-b", prompt: [20], n: 2, max_tokens: 4, temperature: 0.7, top_p: 0.9, top_k: 5, seed: 102, logprobs: 0,
      stop_token_ids: [7], ignore_eos: true, skip_special_tokens: false, return_token_ids: true, return_tokens_as_token_ids: true,
    });
    assert.deepEqual(compA.map((x) => x.seed).sort(), [100, 104]);
    // Greedy: temperature 0, truncation off.
    await s.sample({ prompts: [prompts[0]!], n: 1, maxNewTokens: 2, temperature: 0, topP: 0.5, topK: 3, seed: 1 });
    const g = seenA.filter((x) => x.path === "/v1/completions").at(-1)!.body;
    assert.deepEqual([g.temperature, g.top_p, g.top_k], [0, 1, 0]);
    // Sync: a new checkpoint, every server reloads it, the old one is removed.
    const secs = await s.syncWeights(engine, 1);
    assert.ok(secs >= 0);
    assert.equal(s.version(), 1);
    assert.deepEqual(saved, [join(syncDir, "v0"), join(syncDir, "v1")]);
    assert.ok(!existsSync(join(syncDir, "v0")) && existsSync(join(syncDir, "v1")));
    for (const seen of [seenA, seenB]) {
      assert.equal(seen.filter((x) => x.path === "/collective_rpc").at(-1)?.body.kwargs && (seen.filter((x) => x.path === "/collective_rpc").at(-1)!.body.kwargs as { weights_path: string }).weights_path, join(syncDir, "v1"));
      assert.deepEqual(seen.filter((x) => x.path === "/update_weight_version").at(-1)?.body, { new_version: "1" });
    }
  } finally {
    await s.close();
    a.server.close();
    b.server.close();
    rmSync(syncDir, { recursive: true, force: true });
  }
});

test("server sampler: a server that is down is named in one line; an empty prompt is refused", async () => {
  await assert.rejects(VllmServerSampler.connect({ urls: ["http://127.0.0.1:9"] }), /config error at rollout\.urls: http:\/\/127\.0\.0\.1:9 does not answer/);
  const seen: Seen[] = [];
  const a = await standIn("a", seen);
  const s = await VllmServerSampler.connect({ urls: [a.url] });
  try {
    await assert.rejects(s.sample({ prompts: [new Int32Array(0)], n: 1, maxNewTokens: 1, temperature: 1, seed: 0 }), /prompt 0 is empty/);
  } finally {
    await s.close();
    a.server.close();
  }
});

test("server faults: a server killed mid-request, hung (health check), or killed during a sync: one line each, its prompts go to the other server, same samples", async () => {
  const seen: Seen[] = [];
  const fa = { now: "none" as Fault };
  const fb = { now: "none" as Fault };
  const a = await standIn("a", seen, fa);
  const b = await standIn("b", seen, fb);
  const lines: string[] = [];
  const s = await VllmServerSampler.connect({ urls: [a.url, b.url], deadlines: { healthIntervalS: 0.1, healthTimeoutS: 0.3, requestTimeoutS: 30 }, onFault: (l) => lines.push(l) }, savingEngine([]));
  const req = { prompts: [Int32Array.from([10]), Int32Array.from([20]), Int32Array.from([30]), Int32Array.from([40])], n: 2, maxNewTokens: 4, temperature: 1, stopTokens: [7], seed: 5 };
  const tokens = (out: { tokens: Int32Array; promptIndex: number }[]) => out.map((o) => [o.promptIndex, ...o.tokens]);
  try {
    const clean = tokens(await s.sample(req));
    // Killed mid-request: b drops the connection of its completions (prompts 1 and 3).
    fb.now = "drop";
    assert.deepEqual(tokens(await s.sample(req)), clean);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, new RegExp(`^vLLM server ${b.url}: POST /v1/completions failed \\(.+\\) \\(policy version 0\\); its prompts go to the other servers$`));
    // b answers /health again: resynced (the current weights) and taken back before the next rollout.
    fb.now = "none";
    const rpcs = () => seen.filter((x) => x.path === "/collective_rpc").length;
    const before = rpcs();
    assert.deepEqual(tokens(await s.sample(req)), clean);
    assert.equal(rpcs(), before + 1, "b reloaded the current weights before taking work");
    assert.match(lines[1]!, /is back \(answering again in \d+ s, synced to policy version 0\)/);
    const atB = () => seen.filter((x) => x.path === "/v1/completions" && (x.body.model as string) === "model-b").length;
    const nB = atB();
    assert.deepEqual(tokens(await s.sample(req)), clean);
    assert.equal(atB(), nB + 2, "b takes its prompts again");
    // Hung (SIGSTOP): the request never answers, nor does /health; found by the health check during the request.
    fb.now = "hang";
    const t0 = performance.now();
    const hung = s.sample(req);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(tokens(await hung), clean);
    assert.ok(performance.now() - t0 < 5000, "a hang is found by /health within seconds, not by the request deadline");
    assert.match(lines.at(-1)!, new RegExp(`^vLLM server ${b.url}: GET /health (did not answer within 0.3 s (before the rollout|while a request was in flight) \\(rollout.healthTimeoutS\\)|failed .*)`));
    // Killed during a sync: the sync completes on a; b is dead until it answers again.
    fb.now = "none";
    await s.sample(req); // b back
    fb.now = "dropSync";
    await s.syncWeights(savingEngine([]), 1);
    assert.equal(s.version(), 1);
    assert.match(lines.at(-1)!, new RegExp(`^vLLM server ${b.url}: POST /collective_rpc failed \\(.+\\) \\(policy version 1\\); its prompts go to the other servers$`));
    fb.now = "none";
    assert.deepEqual(tokens(await s.sample(req)), clean);
    assert.match(lines.at(-1)!, /is back .* synced to policy version 1/);
    // Every server down and none can come back: one line, no wait.
    fa.now = "drop";
    fb.now = "drop";
    await assert.rejects(s.sample(req), (e: Error) => e.name === "PeerError" && /^vLLM servers .*: POST \/v1\/completions failed: every server is down and none can be restarted/.test(e.message) && !e.message.includes("\n"));
  } finally {
    await s.close();
    for (const x of [a, b]) {
      x.server.closeAllConnections();
      x.server.close();
    }
  }
});

test("server faults: a request past its deadline is one line naming the server, the call, the seconds and the field", async () => {
  const seen: Seen[] = [];
  const a = await standIn("a", seen, { now: "none" });
  const fault = { now: "none" as Fault };
  const lines: string[] = [];
  const b = await standIn("b", seen, fault);
  // No health checks during requests (interval 60 s): the request deadline (0.3 s) finds the hang.
  const s = await VllmServerSampler.connect({ urls: [a.url, b.url], deadlines: { healthIntervalS: 60, requestTimeoutS: 0.3, startupTimeoutS: 0.3 }, onFault: (l) => lines.push(l) });
  try {
    const req = { prompts: [Int32Array.from([10]), Int32Array.from([20])], n: 1, maxNewTokens: 2, temperature: 1, seed: 1 };
    await s.sample(req); // the first requests (startupTimeoutS) are done
    fault.now = "stall";
    assert.equal((await s.sample(req)).length, 2);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, new RegExp(`^vLLM server ${b.url}: POST /v1/completions did not answer within 0.3 s \\(rollout.requestTimeoutS\\); its prompts go to the other servers$`));
  } finally {
    await s.close();
    for (const x of [a, b]) {
      x.server.closeAllConnections();
      x.server.close();
    }
  }
});

test("config: rollout.engine vllm turns mismatch correction on by default; colocated needs the torch engine; urls only in server mode", () => {
  const base = { model: { init: {}, engine: "torch" }, tokenizer: { type: "char", alphabet: "0123456789" }, data: { task: "maximum" }, rl: { steps: 1 } };
  const on = parseRunConfig({ ...base, rollout: { engine: "vllm" } });
  assert.deepEqual(on.algorithm!.mismatch, { level: "token", mode: "truncate", cap: 3, low: 0.5, high: 5 });
  const kept = parseRunConfig({ ...base, rollout: { engine: "vllm" }, rl: { steps: 1, algorithm: { preset: "grpo", mismatch: { level: "sequence", mode: "mask" } } } });
  assert.equal(kept.algorithm!.mismatch!.level, "sequence");
  const off = parseRunConfig({ ...base, rollout: { engine: "vllm", mismatchCorrection: false } });
  assert.equal(off.algorithm!.mismatch, undefined);
  assert.equal(parseRunConfig(base).algorithm!.mismatch, undefined);
  assert.throws(() => parseRunConfig({ ...base, model: { init: {} }, rollout: { engine: "vllm" } }), /at rollout: rollout\.mode: colocated runs vLLM inside the torch worker; set model\.engine: torch/);
  assert.throws(() => parseRunConfig({ ...base, rollout: { engine: "vllm", urls: ["http://h:8000"] } }), /rollout\.urls: urls are for mode: server/);
  assert.throws(() => parseRunConfig({ ...base, model: { init: {}, engine: "torch", lora: {} }, rollout: { engine: "vllm", mode: "server" } }), /model\.lora with rollout\.mode: server is not supported yet .*use rollout\.mode: colocated/);
  assert.ok(parseRunConfig({ ...base, model: { init: {}, engine: "torch", lora: {} }, rollout: { engine: "vllm" } }).model.lora);
  assert.throws(() => parseRunConfig({ ...base, model: { init: {}, engine: "torch", distributed: { nprocPerNode: 2 } }, rollout: { engine: "vllm" } }), /rollout\.mode: colocated runs vLLM inside one worker process, not under torchrun .*use rollout\.mode: server/);
  assert.throws(() => parseRunConfig({ ...base, rollout: { engine: "vllm", mode: "server", urls: ["h:8000"] } }), /expected an http\(s\) URL/);
  assert.throws(() => parseRunConfig({ ...base, rollout: { engine: "vllm", kvCacheGiB: 0.5 } }), /rollout\.kvCacheGiB: vLLM reads VLLM_CPU_KVCACHE_SPACE as whole GiB/);
});
