/**
 * Rollouts on vLLM (0.32): the `Sampler` contract of src/core/engine.ts in two modes.
 *
 * - Colocated (`VllmColocatedSampler`): vLLM's `LLM` inside the torch engine's worker process
 *   (python/rlvr_worker/vllm_colocated.py). Weights go from the trainer's modules to vLLM in memory
 *   after each optimizer step (vLLM's in-place `reload_weights` via a worker extension); on a GPU
 *   vLLM sleeps between rollouts so training gets its memory back.
 * - Server (`VllmServerSampler`): one or more vLLM OpenAI-compatible servers; prompt i goes to
 *   server i mod k as one `/v1/completions` request with token ids in (`prompt`) and out
 *   (`return_token_ids`, `logprobs: 0`). After each step the trainer saves a Hugging Face checkpoint
 *   to `syncDir` and every server reloads it in place (`/collective_rpc` → `rlvr_load_weights`,
 *   vLLM's documented reload route; the CPU build has no in-memory transport between processes:
 *   its native weight-transfer backends are NCCL/CUDA-IPC).
 *
 * Sampling semantics, both modes: temperature, top-p, top-k and stop tokens as `SampleRequest`
 * documents; only the request's stop tokens end a sample (`ignore_eos`) and they stay in the
 * output. `logprobs` are vLLM's `processed_logprobs`: the sampled token under softmax(logits / T)
 * (raw softmax when greedy) — the contract's value when top-p = 1 and top-k = 0; with truncation
 * vLLM renormalises over the kept tokens (value higher by −log kept mass). Sample j of prompt i
 * uses seed `seed + i·n + j`, so a call is reproducible for a given vLLM build and batch.
 */
import { packSampleRequest, unpackSampleReply } from "../../engines/torch/sample-wire.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Engine, SampleRequest, SampleResult, Sampler } from "../../core/engine.ts";
import { TorchEngine } from "../../engines/torch/engine.ts";
import type { RolloutEngineConfig } from "./config.ts";
import { freePort, resolveVllmPython, startVllmServer, VLLM_INSTALL_HINT, type LocalVllmServer } from "./vllm-server.ts";
import { openAISamplerFromConfig } from "./openai.ts";

function checkRequest(req: SampleRequest): void {
  if (!(req.n >= 1)) throw new Error(`sample: n must be >= 1, got ${req.n}`);
  req.prompts.forEach((p, i) => {
    if (p.length === 0) throw new Error(`sample: prompt ${i} is empty; every prompt needs at least one token`);
  });
}

/** A sampler that runs vLLM inside the torch engine's worker process. */
export class VllmColocatedSampler implements Sampler {
  readonly name = "vllm-colocated";
  /** -1 until the loop's first sync: the weights pushed at start may predate an SFT stage. */
  private policyVersion = -1;

  private constructor(
    private readonly engine: TorchEngine,
    /** vLLM's version and start-up seconds, as the worker reported them. */
    readonly started: { vllm: string; startupSeconds: number; sleep: boolean },
  ) {}

  /**
   * Start vLLM in `engine`'s worker and push the engine's current weights (version 0).
   * @throws when the worker's Python lacks vLLM (with the setup hint) or vLLM fails to start.
   */
  static async start(engine: Engine, cfg: Pick<RolloutEngineConfig, "gpuMemoryUtilization" | "kvCacheGiB" | "sleep" | "dtype">, seed = 0): Promise<VllmColocatedSampler> {
    if (!(engine instanceof TorchEngine)) throw new Error("config error at rollout.mode: colocated vLLM runs inside the torch engine's worker; set model.engine: torch, or use rollout.mode: server");
    const h: Record<string, unknown> = { seed, gpuMemoryUtilization: cfg.gpuMemoryUtilization, kvCacheGiB: cfg.kvCacheGiB, maxModelLen: engine.info().maxSeqLen || undefined };
    if (cfg.sleep !== undefined) h.sleep = cfg.sleep;
    if (cfg.dtype !== "auto") h.dtype = cfg.dtype;
    try {
      const r = await engine.extensionCall("vllm_init", h);
      return new VllmColocatedSampler(engine, { vllm: String(r.header.vllm), startupSeconds: Number(r.header.startupSeconds), sleep: Boolean(r.header.sleep) });
    } catch (e) {
      const msg = (e as Error).message;
      if (/No module named 'vllm'|needs vLLM/.test(msg)) throw new Error(`${msg.split("\n")[0]}\n${VLLM_INSTALL_HINT}; colocated mode runs the torch worker with that Python (set model.python or rollout.python)`);
      throw e;
    }
  }

  async sample(req: SampleRequest): Promise<SampleResult[]> {
    checkRequest(req);
    const { header, tensors: wire } = packSampleRequest(req);
    const { tensors } = await this.engine.extensionCall("vllm_sample", header, wire);
    return unpackSampleReply(tensors, req);
  }

  /** Push the worker's policy weights into vLLM in memory. @returns wall seconds (as TypeScript saw them). */
  async syncWeights(engine: Engine, policyVersion: number): Promise<number> {
    if (engine !== this.engine) throw new Error("vllm-colocated: syncWeights was given another engine than the one vLLM lives in");
    const t0 = performance.now();
    await this.engine.extensionCall("vllm_sync", { version: policyVersion });
    this.policyVersion = policyVersion;
    return (performance.now() - t0) / 1000;
  }

  /** The version last synced by the loop; -1 before its first sync (so the loop syncs before its first collect, e.g. after SFT). */
  version(): number {
    return this.policyVersion;
  }

  async close(): Promise<void> {
    if (this.engine.alive) await this.engine.extensionCall("vllm_close").catch(() => undefined);
  }
}

interface CompletionChoice {
  index: number;
  token_ids?: number[];
  logprobs?: { token_logprobs?: (number | null)[] } | null;
  finish_reason?: string | null;
}

async function postJson(url: string, body: unknown, timeoutMs: number): Promise<unknown> {
  let r: Response;
  try {
    r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    throw new Error(`vLLM server: POST ${url} failed (${(e as Error).message}); is the server running?`);
  }
  const text = await r.text();
  if (!r.ok) throw new Error(`vLLM server: POST ${url} answered ${r.status}: ${text.slice(0, 400)}`);
  return text ? JSON.parse(text) : null;
}

/** Options of a server-mode sampler. */
export interface VllmServerOptions {
  /** Base URLs of the servers (no trailing /v1). */
  urls: string[];
  /** Directory for weight checkpoints the servers reload (must be visible to every server). */
  syncDir?: string;
  /** Longest wait for one completion request, ms (default 30 min). */
  requestTimeoutMs?: number;
  /** Servers this sampler started and stops on close(). */
  owned?: LocalVllmServer[];
  /** Remove syncDir on close() (it is a temporary directory this sampler made). */
  removeSyncDir?: boolean;
}

/** A sampler that spreads prompts across vLLM OpenAI-compatible servers. */
export class VllmServerSampler implements Sampler {
  readonly name = "vllm-server";
  /** -1 until the loop's first sync: the weights pushed at start may predate an SFT stage. */
  private policyVersion = -1;
  private lastSync: string | null = null;
  private readonly syncDir: string;
  private readonly ownSyncDir: boolean;

  private constructor(
    readonly urls: string[],
    private readonly models: string[],
    private readonly opts: VllmServerOptions,
  ) {
    this.ownSyncDir = !opts.syncDir || !!opts.removeSyncDir;
    this.syncDir = opts.syncDir ?? mkdtempSync(join(tmpdir(), "rlvr-vllm-sync-"));
  }

  /**
   * Connect to running servers (each started with the flags of `vllmServerArgs`) and, when
   * `engine` is given, push its weights to them (version 0).
   * @throws naming the first server that does not answer /v1/models.
   */
  static async connect(opts: VllmServerOptions, engine?: Engine): Promise<VllmServerSampler> {
    const models: string[] = [];
    for (const u of opts.urls) {
      const base = u.replace(/\/+$/, "");
      let r: Response;
      try {
        r = await fetch(`${base}/v1/models`, { signal: AbortSignal.timeout(30_000) });
      } catch (e) {
        throw new Error(`config error at rollout.urls: ${base} does not answer (${(e as Error).message}); start the server first (docs/scaling.md, "vLLM rollouts")`);
      }
      const j = (await r.json()) as { data?: { id: string }[] };
      const id = j.data?.[0]?.id;
      if (!id) throw new Error(`config error at rollout.urls: ${base}/v1/models lists no model`);
      models.push(id);
    }
    const s = new VllmServerSampler(opts.urls.map((u) => u.replace(/\/+$/, "")), models, opts);
    if (engine) {
      await s.syncWeights(engine, 0);
      s.policyVersion = -1; // see policyVersion: the RL loop syncs again before its first collect
    }
    return s;
  }

  /**
   * Start `servers` local vLLM servers for `engine`'s model (its config.json, weights pushed after
   * start) and connect to them.
   */
  static async launch(engine: Engine, cfg: Pick<RolloutEngineConfig, "servers" | "python" | "kvCacheGiB" | "gpuMemoryUtilization" | "dtype" | "syncDir" | "startupTimeoutS" | "extraArgs">, seed = 0, onLog?: (line: string) => void): Promise<VllmServerSampler> {
    const python = resolveVllmPython(cfg.python);
    if (!python) throw new Error(`rollout.engine vllm: no Python with vLLM found; ${VLLM_INSTALL_HINT}`);
    const syncDir = cfg.syncDir ?? mkdtempSync(join(tmpdir(), "rlvr-vllm-sync-"));
    const first = join(syncDir, "v0");
    await engine.save(first);
    const gpu = engine.info().device.startsWith("cuda");
    const dtype = cfg.dtype !== "auto" ? cfg.dtype : gpu ? "bfloat16" : "float32";
    const owned: LocalVllmServer[] = [];
    try {
      const started = await Promise.all(
        Array.from({ length: cfg.servers }, async (_, i) => {
          const port = await freePort();
          const srv = await startVllmServer(
            python,
            { model: first, port, dtype, maxModelLen: engine.info().maxSeqLen, seed: seed + i, gpuMemoryUtilization: gpu ? cfg.gpuMemoryUtilization : undefined, extraArgs: cfg.extraArgs },
            { kvCacheGiB: cfg.kvCacheGiB, timeoutS: cfg.startupTimeoutS, onLog },
          );
          owned.push(srv);
          return srv;
        }),
      );
      return await VllmServerSampler.connect({ urls: started.map((s) => s.url), syncDir, owned, removeSyncDir: !cfg.syncDir }, engine);
    } catch (e) {
      await Promise.all(owned.map((s) => s.close(2000)));
      throw e;
    }
  }

  async sample(req: SampleRequest): Promise<SampleResult[]> {
    checkRequest(req);
    const stops = req.stopTokens ?? [];
    const stopSet = new Set(stops);
    const greedy = req.temperature <= 0;
    const timeout = this.opts.requestTimeoutMs ?? 30 * 60_000;
    const perPrompt = await Promise.all(
      req.prompts.map(async (p, i) => {
        const k = i % this.urls.length;
        const body = {
          model: this.models[k],
          prompt: Array.from(p),
          n: req.n,
          max_tokens: req.maxNewTokens,
          temperature: greedy ? 0 : req.temperature,
          top_p: greedy ? 1 : (req.topP ?? 1),
          top_k: greedy || !req.topK ? 0 : req.topK,
          seed: (req.seed + i * req.n) % 2 ** 31,
          logprobs: 0,
          stop_token_ids: stops,
          ignore_eos: true,
          skip_special_tokens: false,
          return_token_ids: true,
          return_tokens_as_token_ids: true,
        };
        const url = `${this.urls[k]}/v1/completions`;
        const j = (await postJson(url, body, timeout)) as { choices?: CompletionChoice[] };
        const choices = [...(j.choices ?? [])].sort((a, b) => a.index - b.index);
        if (choices.length !== req.n) throw new Error(`vLLM server ${this.urls[k]} returned ${choices.length} completions for prompt ${i}, expected ${req.n}`);
        return choices.map((c): SampleResult => {
          if (!c.token_ids) throw new Error(`vLLM server ${this.urls[k]} returned no token_ids (needs vLLM >= 0.10 with return_token_ids)`);
          const ids = c.token_ids.slice(0, req.maxNewTokens);
          const lps = c.logprobs?.token_logprobs ?? [];
          if (lps.length < ids.length) throw new Error(`vLLM server ${this.urls[k]} returned ${lps.length} log-probs for ${ids.length} tokens`);
          const last = ids[ids.length - 1];
          return {
            promptIndex: i,
            tokens: Int32Array.from(ids),
            logprobs: Float32Array.from(ids.map((_, t) => lps[t] ?? NaN)),
            stopReason: last !== undefined && stopSet.has(last) ? "completed" : "max_tokens",
          };
        });
      }),
    );
    return perPrompt.flat();
  }

  /**
   * Save `engine`'s weights under syncDir/v<version> and have every server reload them in place.
   * @returns wall seconds (save + reload on all servers).
   */
  async syncWeights(engine: Engine, policyVersion: number): Promise<number> {
    const t0 = performance.now();
    const dir = join(this.syncDir, `v${policyVersion}`);
    await engine.save(dir);
    await Promise.all(this.urls.map((u) => postJson(`${u}/collective_rpc`, { method: "rlvr_load_weights", kwargs: { weights_path: dir } }, 10 * 60_000)));
    await Promise.all(this.urls.map((u) => postJson(`${u}/update_weight_version`, { new_version: String(policyVersion) }, 60_000).catch(() => undefined)));
    if (this.lastSync && this.lastSync !== dir) rmSync(this.lastSync, { recursive: true, force: true });
    this.lastSync = dir;
    this.policyVersion = policyVersion;
    return (performance.now() - t0) / 1000;
  }

  /** The version last synced by the loop; -1 before its first sync (so the loop syncs before its first collect, e.g. after SFT). */
  version(): number {
    return this.policyVersion;
  }

  async close(): Promise<void> {
    await Promise.all((this.opts.owned ?? []).map((s) => s.close()));
    if (this.ownSyncDir) rmSync(this.syncDir, { recursive: true, force: true });
  }
}

/**
 * The sampler a config's `rollout` block names, or null when the trainer samples.
 * @param engine the trainer (colocated: vLLM starts inside its worker; server: its weights are pushed first)
 */
export async function createSampler(cfg: RolloutEngineConfig | undefined, engine: Engine, seed: number): Promise<Sampler | null> {
  if (!cfg || cfg.engine === "trainer") return null;
  if (cfg.engine === "openai") return openAISamplerFromConfig(cfg);
  if (cfg.mode === "colocated") return VllmColocatedSampler.start(engine, cfg, seed);
  if (cfg.urls) return VllmServerSampler.connect({ urls: cfg.urls, syncDir: cfg.syncDir }, engine);
  return VllmServerSampler.launch(engine, cfg, seed);
}

/**
 * Colocated vLLM lives in the torch worker, so the worker must run a Python that has vLLM: the
 * config with model.python set to rollout.python, $RLVR_VLLM_PYTHON or python/.venv-vllm when
 * model.python is unset (otherwise `cfg` unchanged).
 */
export function withColocatedPython<C extends { model: { python?: string }; rollout?: RolloutEngineConfig }>(cfg: C): C {
  const r = cfg.rollout;
  if (!r || r.engine !== "vllm" || r.mode !== "colocated" || cfg.model.python) return cfg;
  const py = resolveVllmPython(r.python);
  return py ? { ...cfg, model: { ...cfg.model, python: py } } : cfg;
}
