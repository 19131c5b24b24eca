// `rlvr tinker` on the torch engine answers the tinker SDK with the embedded engine's numbers:
// the same supervised and PPO steps, grad norms, forward and compute_logprobs log-probs and
// greedy samples from the same LoRA adapter (attention, MLP and head; peft on torch). Needs the SDK
// (.venv-tinker) and the torch worker with peft.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveTinker } from "../../src/tinker/server.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { writeTinyModel } from "./fixture.ts";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { loadTokenizer } from "../../src/tokenizers/index.ts";
import { engineLora } from "../../src/tinker/state.ts";

const python = process.env["TINKER_PYTHON"] ?? new URL("../../.venv-tinker/bin/python", import.meta.url).pathname;
const torch = TorchEngine.probe();
const SKIP = !existsSync(python) ? `no tinker SDK at ${python}` : !torch.ok ? `no torch engine: ${torch.reason}` : false;

interface Numbers {
  loss: number[];
  grad_norm: number[];
  forward: number[];
  compute: number[];
  greedy: number[];
}

async function numbersFrom(engine: "embedded" | "torch", model: string, adapter: string, dataDir: string): Promise<Numbers> {
  const server = await serveTinker({ port: 0, models: { tiny: model }, dataDir, engine, log: () => {} });
  try {
    const r = await new Promise<{ code: number; out: string; err: string }>((res) => {
      const p = spawn(python, [new URL("./sdk_parity.py", import.meta.url).pathname, server.url, "tiny", adapter], { cwd: tmpdir() });
      let out = "";
      let err = "";
      p.stdout.on("data", (d) => (out += d));
      p.stderr.on("data", (d) => (err += d));
      p.on("close", (code) => res({ code: code ?? 1, out, err }));
    });
    const line = r.out.split("\n").find((l) => l.startsWith("{"));
    if (!line) throw new Error(`sdk_parity.py on ${engine} failed (exit ${r.code}):\n${r.err.slice(-3000)}`);
    return JSON.parse(line) as Numbers;
  } finally {
    await server.close();
  }
}

describe("rlvr tinker: torch engine vs embedded engine through the SDK", { skip: SKIP }, () => {
  let dir: string;
  let emb: Numbers;
  let tor: Numbers;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "rlvr-tinker-engines-"));
    await writeTinyModel(join(dir, "tiny"));
    // The adapter a rank-4 SDK client gets (engineLora), written once so both engines start from it.
    const tokenizer = await loadTokenizer(join(dir, "tiny"));
    const init = await EmbeddedEngine.fromPretrained(join(dir, "tiny"), { tokenizer, seed: 0, lora: engineLora({ rank: 4 }) });
    await init.save(join(dir, "adapter"));
    await init.close();
    emb = await numbersFrom("embedded", join(dir, "tiny"), join(dir, "adapter"), join(dir, "emb"));
    tor = await numbersFrom("torch", join(dir, "tiny"), join(dir, "adapter"), join(dir, "torch"));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  const close = (a: number[], b: number[], tol: number, what: string) => {
    assert.equal(a.length, b.length, what);
    a.forEach((v, i) => assert.ok(Math.abs(v - b[i]!) <= tol * Math.max(1, Math.abs(b[i]!)), `${what}[${i}]: torch ${v} vs embedded ${b[i]}`));
  };
  it("losses and grad norms of 3 cross_entropy + 3 ppo steps agree", () => {
    close(tor.loss, emb.loss, 1e-4, "loss");
    close(tor.grad_norm, emb.grad_norm, 1e-3, "grad_norm");
  });
  it("forward and compute_logprobs agree across engines and with each other", () => {
    close(tor.forward, emb.forward, 1e-4, "forward");
    close(tor.compute, emb.compute, 1e-4, "compute_logprobs");
    close(emb.compute.slice(0, emb.forward.length), emb.forward, 1e-5, "embedded compute vs forward");
  });
  it("greedy samples are the same tokens", () => assert.deepEqual(tor.greedy, emb.greedy));
});

describe("rlvr tinker --engine torch: several clients on one base share one worker (multi-tenant LoRA)", { skip: SKIP }, () => {
  let dir: string;
  let out: Record<string, number[]>;
  const logs: string[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "rlvr-tinker-tenants-"));
    await writeTinyModel(join(dir, "tiny"));
    const server = await serveTinker({ port: 0, models: { tiny: join(dir, "tiny") }, dataDir: join(dir, "data"), engine: "torch", log: (l) => logs.push(l) });
    try {
      const r = await new Promise<{ code: number; out: string; err: string }>((res) => {
        const p = spawn(python, [new URL("./sdk_tenants.py", import.meta.url).pathname, server.url, "tiny"], { cwd: tmpdir() });
        let o = "";
        let err = "";
        p.stdout.on("data", (d) => (o += d));
        p.stderr.on("data", (d) => (err += d));
        p.on("close", (code) => res({ code: code ?? 1, out: o, err }));
      });
      const line = r.out.split("\n").find((l) => l.startsWith("{"));
      if (!line) throw new Error(`sdk_tenants.py failed (exit ${r.code}):\n${r.err.slice(-3000)}`);
      out = JSON.parse(line) as Record<string, number[]>;
    } finally {
      await server.close();
    }
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  const same = (a: number[], b: number[], tol: number, what: string) => {
    assert.equal(a.length, b.length, what);
    a.forEach((v, i) => assert.ok(Math.abs(v - b[i]!) <= tol, `${what}[${i}]: ${v} vs ${b[i]}`));
  };
  it("every client after the first shares the loaded base (no second worker)", () => {
    const shared = logs.filter((l) => /shares the frozen base .* already loaded \(no copy\)/.test(l));
    // b, c, fresh (training), the sampler on b's adapter, the base sampler: 5 after the first client.
    assert.equal(shared.length, 5, logs.join("\n"));
  });
  it("training A leaves B bit-identical; B trained interleaved with A ends as C (B's seed) trained alone", () => {
    assert.deepEqual(out["b_after_a"], out["b_before"]);
    same(out["b"]!, out["c"]!, 1e-6, "b vs c");
    assert.ok(out["a"]!.some((v, i) => Math.abs(v - out["b"]![i]!) > 1e-3), "A trained on other data");
  });
  it("a sampling client on B's saved adapter and one on the base (KL reference) score as B and a fresh client", () => {
    same(out["b_sampler"]!, out["b"]!, 1e-5, "b's sampler vs b");
    same(out["base"]!, out["fresh"]!, 1e-5, "base sampler vs fresh client");
    assert.ok(out["base"]!.some((v, i) => Math.abs(v - out["b"]![i]!) > 1e-3));
  });
});
