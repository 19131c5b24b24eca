/**
 * `model.engine: auto` and the engine probe (src/engines/probe.ts): auto resolves to embedded when
 * the torch engine's Python is missing, to torch when it is set up and the probe says it is faster
 * (an injected probe result), falls back to embedded when the torch worker does not start; the
 * probe's step (batch layout, loss cotangents), its cache (hit, other shape, refresh, off), the
 * schema, and one real probe of both engines when python/.venv exists (skipped otherwise; CI has it).
 */
import { describe, test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEngine } from "../../src/engines/open.ts";
import type { ModelSpec } from "../../src/engines/open-kind.ts";
import { chooseEngine, engineAdvice, probeCacheFile, probeCacheKey, probeEngines, probeShapeOf, torchSetUp, AUTO_MIN_RATIO, PROBE_MAX_ROWS, type ProbeMeasurement, type ProbeShape } from "../../src/engines/probe.ts";
import type { Engine, EngineInfo, SampleRequest, SampleResult, TokenBatch, TokenLossFn } from "../../src/core/engine.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { DEFAULT_VENV } from "../../src/engines/torch/worker.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";
import { tinyConfig } from "../trainer/helpers.ts";

const tokenizer = new CharTokenizer({ alphabet: "0123456789+=" });
const tiny: ModelSpec = { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 32, tieWordEmbeddings: true, ropeTheta: 10000 } };
/** An existing file: the cheap set-up check passes; the probe itself is injected. */
const EXISTING = process.execPath;
const venvPython = join(DEFAULT_VENV, "bin", "python");
const HAVE_VENV = existsSync(venvPython);
const NO_VENV = HAVE_VENV ? false : `no ${DEFAULT_VENV} (rlvr setup torch)`;

let cacheRoot: string;
const saved = { cache: process.env.RLVR_CACHE_DIR, probe: process.env.RLVR_ENGINE_PROBE, python: process.env.RLVR_PYTHON };
before(() => {
  cacheRoot = mkdtempSync(join(tmpdir(), "rlvr-probe-cache-"));
  delete process.env.RLVR_PYTHON;
});
beforeEach(() => {
  process.env.RLVR_CACHE_DIR = mkdtempSync(join(cacheRoot, "c-"));
  delete process.env.RLVR_ENGINE_PROBE;
});
after(() => {
  for (const [k, v] of [["RLVR_CACHE_DIR", saved.cache], ["RLVR_ENGINE_PROBE", saved.probe], ["RLVR_PYTHON", saved.python]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(cacheRoot, { recursive: true, force: true });
});

const measured = (ratio: number): ProbeMeasurement => ({ embeddedSeconds: ratio, torchSeconds: 1, ratio, probeSeconds: 5, steps: 3, shape: probeShapeOf(undefined), cached: false, measuredAt: "2026-01-01T00:00:00.000Z" });

describe("engine: auto", () => {
  test("the schema accepts auto with torch-only fields; embedded stays the default", () => {
    const base = { tokenizer: { type: "char", alphabet: "01" }, data: { task: "addition" } };
    const cfg = parseRunConfig({ ...base, model: { engine: "auto", init: {}, device: "cpu", dtype: "float32", python: "/x/python", tokenBudget: 4096 } });
    assert.equal(cfg.model.engine, "auto");
    assert.equal(parseRunConfig({ ...base, model: { init: {} } }).model.engine, "embedded");
    assert.throws(() => parseRunConfig({ ...base, model: { engine: "fastest", init: {} } }), /model\.engine/);
  });

  test("resolves to embedded when the torch engine's Python does not exist, even if a probe said torch is faster", async () => {
    const lines: string[] = [];
    const engine = await openEngine({ ...tiny, engine: "auto", python: "/nonexistent/bin/python" }, { tokenizer, log: (l) => lines.push(l), engineProbe: async () => measured(5) });
    try {
      assert.equal(engine.info().engine, "embedded");
    } finally {
      await engine.close();
    }
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^engine: auto → embedded \(the torch engine's Python \/nonexistent\/bin\/python does not exist \(model\.python\)\)$/);
    assert.equal(torchSetUp("/nonexistent/bin/python").ok, false);
    const viaEnv = (() => {
      process.env.RLVR_PYTHON = "/nonexistent/python3";
      try {
        return torchSetUp();
      } finally {
        delete process.env.RLVR_PYTHON;
      }
    })();
    assert.ok(!viaEnv.ok && /\$RLVR_PYTHON/.test(viaEnv.reason));
  });

  test("chooses torch when it is set up and the probe finds it faster; embedded when it is not faster enough or the probe is unavailable", async () => {
    const model = { ...tiny, engine: "auto" as const, python: EXISTING };
    const fast = await chooseEngine(model, { tokenizer, probe: async () => measured(2.8) });
    assert.equal(fast.engine, "torch");
    assert.match(fast.reason, /^engine: auto → torch \(torch 2\.8× faster per RL step; embedded 2\.80 s, torch 1\.00 s a step; 3-step probe of 128 responses × 16 tokens, took 5\.0 s\)$/);
    const tie = await chooseEngine(model, { tokenizer, probe: async () => measured(AUTO_MIN_RATIO - 0.05) });
    assert.equal(tie.engine, "embedded");
    assert.match(tie.reason, /not 1\.1× faster/);
    const off = await chooseEngine(model, { tokenizer, probe: async () => ({ unavailable: "the engine probe is off (RLVR_ENGINE_PROBE=off)" }) });
    assert.deepEqual([off.engine, off.reason], ["embedded", "engine: auto → embedded (the engine probe is off (RLVR_ENGINE_PROBE=off))"]);
  });

  test("falls back to embedded, saying why, when torch was picked but its worker does not start", async () => {
    const lines: string[] = [];
    // /bin/true is a file that exists but is no Python: the worker exits before its hello.
    const engine = await openEngine({ ...tiny, engine: "auto", python: "/bin/true" }, { tokenizer, log: (l) => lines.push(l), engineProbe: async () => measured(3), torchStderr: () => {} });
    try {
      assert.equal(engine.info().engine, "embedded");
    } finally {
      await engine.close();
    }
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, /^engine: auto → torch/);
    assert.match(lines[1]!, /^engine: auto → embedded after all \(the torch engine did not start: /);
  });

  test("a run with engine: auto and no torch engine trains on the embedded engine; the advice hook stays silent", async () => {
    const dir = mkdtempSync(join(cacheRoot, "run-"));
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      if (String(chunk).startsWith("engine:")) lines.push(String(chunk).trim());
      return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    const advice: string[] = [];
    try {
      const base = tinyConfig(join(dir, "a"), { sft: undefined });
      const cfg = parseRunConfig({ ...base, model: { ...base.model, engine: "auto", python: "/nonexistent/python" }, rl: { ...base.rl!, steps: 1 } });
      const s = await train(cfg, { quiet: true, engineAdvice: (l) => advice.push(l) });
      assert.ok(s.evals["rl"]);
      const embedded = parseRunConfig({ ...base, out: join(dir, "b"), model: { ...base.model, python: "/nonexistent/python" }, rl: { ...base.rl!, steps: 1 } });
      await train(embedded, { quiet: true, engineAdvice: (l) => advice.push(l) });
    } finally {
      process.stderr.write = write;
    }
    assert.deepEqual(lines, ["engine: auto → embedded (the torch engine's Python /nonexistent/python does not exist (model.python))"]);
    assert.deepEqual(advice, [], "no torch engine, no probe and no advice");
    assert.match(readFileSync(join(dir, "a", "report.md"), "utf8"), /random-init\(16x1\)/);
  });

  test("opens the torch engine when python/.venv exists and the (injected) probe says it is faster", { skip: NO_VENV }, async () => {
    const lines: string[] = [];
    const engine = await openEngine({ ...tiny, engine: "auto" }, { tokenizer, log: (l) => lines.push(l), engineProbe: async () => measured(2), torchStderr: () => {} });
    try {
      assert.ok(engine instanceof TorchEngine);
      assert.equal(engine.info().engine, "torch");
    } finally {
      await engine.close();
    }
    assert.match(lines[0]!, /^engine: auto → torch \(torch 2\.0× faster/);
  });
});

/** A fake engine whose probe step takes about `ms` milliseconds; it checks the batches it is given. */
function fakeEngine(kind: string, ms: number, seen: { batches: TokenBatch[]; opens: string[] }): Engine {
  const sleep = () => new Promise((r) => setTimeout(r, ms / 2));
  seen.opens.push(kind);
  const info: EngineInfo = { engine: kind, modelId: "fake", vocabSize: 15, maxSeqLen: 64, numParams: 1, device: "cpu", dtype: "float32" };
  return {
    info: () => info,
    async sample(req: SampleRequest): Promise<SampleResult[]> {
      await sleep();
      return req.prompts.flatMap((_, i) =>
        Array.from({ length: req.n }, () => ({ promptIndex: i, tokens: new Int32Array(req.maxNewTokens).fill(4), logprobs: new Float32Array(req.maxNewTokens), stopReason: "max_tokens" as const })),
      );
    },
    async score(b: TokenBatch) {
      return { logprobs: new Float32Array(b.batchSize * b.seqLen) };
    },
    async forwardBackward(b: TokenBatch, loss: TokenLossFn) {
      seen.batches.push(b);
      await sleep();
      const out = loss({ logprobs: new Float32Array(b.batchSize * b.seqLen).fill(-1) }, b);
      let abs = 0;
      for (let i = 0; i < out.dLogprobs.length; i++) {
        if (b.lossMask[i] === 0) assert.equal(out.dLogprobs[i], 0, "cotangent on a masked token");
        abs += Math.abs(out.dLogprobs[i]!);
      }
      assert.ok(Math.abs(abs - 1) < 1e-4, `cotangents are ±1/tokens, |sum| ${abs}`);
      return { loss: out.loss, metrics: {}, tokens: 0 };
    },
    async optimStep() {
      return { gradNorm: 0, skipped: false };
    },
    async setReference() {},
    async save() {},
    async load() {},
    async close() {},
  };
}

describe("probeEngines", () => {
  const shape: ProbeShape = { prompts: 3, groupSize: 2, promptTokens: 5, newTokens: 4 };
  const model: ModelSpec = { ...tiny, python: EXISTING };
  const fakes = (seen: { batches: TokenBatch[]; opens: string[] }) => async (_m: ModelSpec, kind: "embedded" | "torch") => fakeEngine(kind, kind === "embedded" ? 120 : 10, seen);

  test("measures both engines (2 warm-up + 3 timed steps each), lays the batch out as prompt + response, and caches per model shape", async () => {
    const seen = { batches: [] as TokenBatch[], opens: [] as string[] };
    const r = await probeEngines(model, { tokenizer, shape, open: fakes(seen) });
    assert.ok(!("unavailable" in r));
    assert.deepEqual(seen.opens, ["torch", "embedded"]); // the torch worker starts first, during the embedded warm-up
    assert.equal(seen.batches.length, 10); // (2 warm-up + 3) × 2 engines
    for (const b of seen.batches) {
      assert.deepEqual([b.batchSize, b.seqLen], [6, 9]);
      assert.deepEqual([...b.lengths], [9, 9, 9, 9, 9, 9]);
      assert.deepEqual([...b.lossMask.slice(0, 9)], [0, 0, 0, 0, 0, 1, 1, 1, 1]);
      assert.deepEqual([...b.tokens.slice(5, 9)], [4, 4, 4, 4]);
    }
    assert.ok(r.ratio > 2, `fake embedded steps are 12× slower, measured ratio ${r.ratio}`);
    assert.equal(r.cached, false);
    assert.ok(r.probeSeconds >= r.embeddedSeconds * 5 && r.steps === 3);
    assert.ok(existsSync(probeCacheFile()));

    const again = await probeEngines(model, { tokenizer, shape, open: fakes(seen) });
    assert.equal(seen.opens.length, 2, "a cached result must not re-probe");
    assert.ok(!("unavailable" in again) && again.cached);
    assert.deepEqual({ ...again, cached: false }, r);

    await probeEngines({ ...model, init: { ...tiny.init!, hiddenSize: 32 } }, { tokenizer, shape, open: fakes(seen) });
    assert.equal(seen.opens.length, 4, "another model shape is probed");
    await probeEngines(model, { tokenizer, shape: { ...shape, newTokens: 8 }, open: fakes(seen) });
    assert.equal(seen.opens.length, 6, "another probe shape is probed");
    const keys = Object.keys(JSON.parse(readFileSync(probeCacheFile(), "utf8")) as object);
    assert.equal(keys.length, 3);

    process.env.RLVR_ENGINE_PROBE = "refresh";
    await probeEngines(model, { tokenizer, shape, open: fakes(seen) });
    assert.equal(seen.opens.length, 8, "RLVR_ENGINE_PROBE=refresh measures again");
    process.env.RLVR_ENGINE_PROBE = "off";
    assert.deepEqual(await probeEngines(model, { tokenizer, shape, open: fakes(seen) }), { unavailable: "the engine probe is off (RLVR_ENGINE_PROBE=off)" });
    assert.equal(seen.opens.length, 8);
  });

  test("never starts an engine when the torch engine is not set up, and reports an engine that fails", async () => {
    const seen = { batches: [] as TokenBatch[], opens: [] as string[] };
    const r = await probeEngines({ ...tiny, python: "/nonexistent/python" }, { tokenizer, shape, open: fakes(seen) });
    assert.ok("unavailable" in r && /does not exist/.test(r.unavailable));
    assert.equal(seen.opens.length, 0);
    const failing = await probeEngines(model, {
      tokenizer,
      shape,
      open: async (_m, kind) => {
        if (kind === "torch") throw new Error("torch worker exited with code 1\nTraceback ...");
        return fakeEngine(kind, 2, seen);
      },
    });
    assert.deepEqual(failing, { unavailable: "the torch engine failed in the probe: torch worker exited with code 1", failed: "torch" });
    const tooBig = async () => probeEngines(model, {
      tokenizer,
      shape,
      cache: false,
      open: async (_m, kind) => {
        if (kind === "embedded") throw new Error("model too large for the embedded engine: 5.1 GiB of Wasm heap (limit 4 GiB)");
        return fakeEngine(kind, 2, seen);
      },
    });
    const choice = await chooseEngine(model, { tokenizer, probe: tooBig });
    assert.deepEqual([choice.engine, choice.reason], ["torch", "engine: auto → torch (the embedded engine failed in the probe: model too large for the embedded engine: 5.1 GiB of Wasm heap (limit 4 GiB))"]);
    assert.equal(existsSync(probeCacheFile()), false, "a failed probe is not cached");
  });

  test("probeShapeOf: the RL step's groups, at most PROBE_MAX_ROWS responses, the median prompt length", () => {
    assert.deepEqual(probeShapeOf({ promptsPerStep: 128, groupSize: 4, maxNewTokens: 5 }, 7), { prompts: 128, groupSize: 4, promptTokens: 7, newTokens: 5 });
    assert.deepEqual(probeShapeOf({ promptsPerStep: 256, groupSize: 8, maxNewTokens: 5 }, 7), { prompts: 64, groupSize: 8, promptTokens: 7, newTokens: 5 });
    assert.deepEqual(probeShapeOf({ promptsPerStep: 8, groupSize: 8, maxNewTokens: 64 }, [new Int32Array(3), new Int32Array(9), new Int32Array(4)]), { prompts: 8, groupSize: 8, promptTokens: 4, newTokens: 64 });
    const big = probeShapeOf({ promptsPerStep: 100, groupSize: 48, maxNewTokens: 16 });
    assert.equal(big.groupSize, 48);
    assert.ok(big.prompts * big.groupSize <= PROBE_MAX_ROWS && big.prompts >= 1);
  });

  test("engineAdvice: the ratio and how to switch; nothing without a measurement", () => {
    const line = engineAdvice(measured(2.8), "model.engine: torch");
    assert.match(line!, /^engine: the torch engine is set up and 2\.8× faster per RL step on this machine \(embedded 2\.80 s, torch 1\.00 s a step; .*\); switch with model\.engine: torch$/);
    assert.match(engineAdvice(measured(0.8), "x")!, /not faster here \(torch 0\.80× as fast/);
    assert.equal(engineAdvice({ unavailable: "no venv" }, "x"), null);
  });

  test("one real probe of both engines on a tiny model", { skip: NO_VENV, timeout: 300_000 }, async () => {
    const t = performance.now();
    const r = await probeEngines(tiny, { tokenizer, shape: { prompts: 4, groupSize: 2, promptTokens: 6, newTokens: 4 } });
    const wall = (performance.now() - t) / 1000;
    if ("unavailable" in r) assert.fail(r.unavailable);
    console.log(`# real probe, tiny model: embedded ${r.embeddedSeconds.toFixed(3)} s, torch ${r.torchSeconds.toFixed(3)} s a step, ratio ${r.ratio.toFixed(2)}, probe ${r.probeSeconds.toFixed(1)} s`);
    assert.ok(r.embeddedSeconds > 0 && r.torchSeconds > 0 && Number.isFinite(r.ratio));
    assert.ok(r.probeSeconds <= wall + 0.01 && r.probeSeconds > 3 * (r.embeddedSeconds + r.torchSeconds));
    const again = await probeEngines(tiny, { tokenizer, shape: { prompts: 4, groupSize: 2, promptTokens: 6, newTokens: 4 } });
    assert.ok(!("unavailable" in again) && again.cached && again.ratio === r.ratio);
  });
});

test("the probe's cache key changes with RLVR_JAX_PATCH (a result measured with the jax-js patch off is not reused with it on)", () => {
  const prev = process.env.RLVR_JAX_PATCH;
  const key = () => probeCacheKey({ init: { hiddenSize: 64, numLayers: 2 } } as unknown as ModelSpec, { tokenizer: { vocabSize: 16 }, python: "py", shape: probeShapeOf(undefined), steps: 3 });
  try {
    delete process.env.RLVR_JAX_PATCH;
    const on = key();
    process.env.RLVR_JAX_PATCH = "off";
    assert.notEqual(key(), on);
    delete process.env.RLVR_JAX_PATCH;
    assert.equal(key(), on, "the key is otherwise stable");
  } finally {
    if (prev === undefined) delete process.env.RLVR_JAX_PATCH;
    else process.env.RLVR_JAX_PATCH = prev;
  }
});

test("the probe's cache key changes with native kernels (option or RLVR_NATIVE_KERNELS) and with LoRA", () => {
  const prev = process.env.RLVR_NATIVE_KERNELS;
  const key = (m: object = {}) => probeCacheKey({ init: { hiddenSize: 64, numLayers: 2 }, ...m } as unknown as ModelSpec, { tokenizer: { vocabSize: 16 }, python: "py", shape: probeShapeOf(undefined), steps: 3 });
  try {
    delete process.env.RLVR_NATIVE_KERNELS;
    const plain = key();
    assert.notEqual(key({ nativeKernels: true }), plain);
    assert.notEqual(key({ lora: { rank: 16 } }), plain);
    process.env.RLVR_NATIVE_KERNELS = "on";
    assert.notEqual(key(), plain);
    delete process.env.RLVR_NATIVE_KERNELS;
    assert.equal(key(), plain, "the key is otherwise stable");
  } finally {
    if (prev === undefined) delete process.env.RLVR_NATIVE_KERNELS;
    else process.env.RLVR_NATIVE_KERNELS = prev;
  }
});
