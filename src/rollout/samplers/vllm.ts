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
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Engine, SampleRequest, SampleResult, Sampler } from "../../core/engine.ts";
import { TorchEngine } from "../../engines/torch/engine.ts";
import type { RolloutEngineConfig } from "./config.ts";
import { freePort, resolveVllmPython, startVllmServer, VLLM_INSTALL_HINT, type LocalVllmServer } from "./vllm-server.ts";
import { openAISamplerFromConfig } from "./openai.ts";
import { checkRequest, VllmServerSampler, type RestartSpec, type ServerDeadlines } from "./vllm-server-sampler.ts";

export { VllmServerSampler, DEFAULT_DEADLINES, type ServerDeadlines, type VllmServerOptions } from "./vllm-server-sampler.ts";

/** The deadlines of a config's rollout block. */
function deadlinesOf(cfg: Pick<RolloutEngineConfig, keyof ServerDeadlines>): ServerDeadlines {
  return { requestTimeoutS: cfg.requestTimeoutS, startupTimeoutS: cfg.startupTimeoutS, syncTimeoutS: cfg.syncTimeoutS, healthTimeoutS: cfg.healthTimeoutS, healthIntervalS: cfg.healthIntervalS, maxRestarts: cfg.maxRestarts };
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
    /** Deadlines of a rollout and of a weight sync, seconds (rollout.requestTimeoutS, rollout.syncTimeoutS). */
    private readonly timeouts: { requestTimeoutS: number; syncTimeoutS: number },
  ) {}

  /**
   * Start vLLM in `engine`'s worker and push the engine's current weights (version 0).
   * @throws when the worker's Python lacks vLLM (with the setup hint) or vLLM fails to start.
   */
  static async start(engine: Engine, cfg: Pick<RolloutEngineConfig, "gpuMemoryUtilization" | "kvCacheGiB" | "sleep" | "dtype"> & Partial<Pick<RolloutEngineConfig, "requestTimeoutS" | "syncTimeoutS" | "startupTimeoutS">>, seed = 0): Promise<VllmColocatedSampler> {
    if (!(engine instanceof TorchEngine)) throw new Error("config error at rollout.mode: colocated vLLM runs inside the torch engine's worker; set model.engine: torch, or use rollout.mode: server");
    const h: Record<string, unknown> = { seed, gpuMemoryUtilization: cfg.gpuMemoryUtilization, kvCacheGiB: cfg.kvCacheGiB, maxModelLen: engine.info().maxSeqLen || undefined };
    if (cfg.sleep !== undefined) h.sleep = cfg.sleep;
    if (cfg.dtype !== "auto") h.dtype = cfg.dtype;
    try {
      const startup = cfg.startupTimeoutS ? { seconds: cfg.startupTimeoutS, field: "rollout.startupTimeoutS" } : undefined;
      const r = await engine.extensionCall("vllm_init", h, {}, startup);
      const timeouts = { requestTimeoutS: cfg.requestTimeoutS ?? 600, syncTimeoutS: cfg.syncTimeoutS ?? 600 };
      return new VllmColocatedSampler(engine, { vllm: String(r.header.vllm), startupSeconds: Number(r.header.startupSeconds), sleep: Boolean(r.header.sleep) }, timeouts);
    } catch (e) {
      const msg = (e as Error).message;
      if (/No module named 'vllm'|needs vLLM/.test(msg)) throw new Error(`${msg.split("\n")[0]}\n${VLLM_INSTALL_HINT}; colocated mode runs the torch worker with that Python (set model.python or rollout.python)`);
      throw e;
    }
  }

  async sample(req: SampleRequest): Promise<SampleResult[]> {
    checkRequest(req);
    const { header, tensors: wire } = packSampleRequest(req);
    const { tensors } = await this.engine.extensionCall("vllm_sample", header, wire, { seconds: this.timeouts.requestTimeoutS, field: "rollout.requestTimeoutS" });
    return unpackSampleReply(tensors, req);
  }

  /** Push the worker's policy weights into vLLM in memory. @returns wall seconds (as TypeScript saw them). */
  async syncWeights(engine: Engine, policyVersion: number): Promise<number> {
    if (engine !== this.engine) throw new Error("vllm-colocated: syncWeights was given another engine than the one vLLM lives in");
    const t0 = performance.now();
    await this.engine.extensionCall("vllm_sync", { version: policyVersion }, {}, { seconds: this.timeouts.syncTimeoutS, field: "rollout.syncTimeoutS" });
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

/**
 * The sampler a config's `rollout` block names, or null when the trainer samples.
 * @param engine the trainer (colocated: vLLM starts inside its worker; server: its weights are pushed first)
 */
export async function createSampler(cfg: RolloutEngineConfig | undefined, engine: Engine, seed: number): Promise<Sampler | null> {
  if (!cfg || cfg.engine === "trainer") return null;
  if (cfg.engine === "openai") return openAISamplerFromConfig(cfg);
  if (cfg.mode === "colocated") return VllmColocatedSampler.start(engine, cfg, seed);
  if (cfg.urls) {
    return VllmServerSampler.connect({ urls: cfg.urls, syncDir: cfg.syncDir, deadlines: deadlinesOf(cfg) }, engine);
  }
  return launchVllmServers(engine, cfg, seed);
}

/**
 * Start `servers` local vLLM servers for `engine`'s model (its config.json, weights pushed after
 * start; each in its own process group) and connect to them; the sampler restarts them after a fault.
 * @throws when a server does not start (the others are stopped).
 */
export async function launchVllmServers(engine: Engine, cfg: Pick<RolloutEngineConfig, "servers" | "python" | "kvCacheGiB" | "gpuMemoryUtilization" | "dtype" | "syncDir" | "extraArgs" | keyof ServerDeadlines>, seed = 0, onLog?: (line: string) => void): Promise<VllmServerSampler> {
  const python = resolveVllmPython(cfg.python);
  if (!python) throw new Error(`rollout.engine vllm: no Python with vLLM found; ${VLLM_INSTALL_HINT}`);
  const syncDir = cfg.syncDir ?? mkdtempSync(join(tmpdir(), "rlvr-vllm-sync-"));
  const first = join(syncDir, "v0");
  await engine.save(first);
  const gpu = engine.info().device.startsWith("cuda");
  const dtype = cfg.dtype !== "auto" ? cfg.dtype : gpu ? "bfloat16" : "float32";
  const owned: { server: LocalVllmServer; restart: RestartSpec }[] = [];
  try {
    await Promise.all(
      Array.from({ length: cfg.servers }, async (_, i) => {
        const port = await freePort();
        const args = { model: first, port, dtype, maxModelLen: engine.info().maxSeqLen, seed: seed + i, gpuMemoryUtilization: gpu ? cfg.gpuMemoryUtilization : undefined, extraArgs: cfg.extraArgs };
        const server = await startVllmServer(python, args, { kvCacheGiB: cfg.kvCacheGiB, timeoutS: cfg.startupTimeoutS, onLog });
        owned[i] = { server, restart: { python, args, kvCacheGiB: cfg.kvCacheGiB, onLog } };
      }),
    );
    return await VllmServerSampler.connect({ urls: owned.map((o) => o.server.url), syncDir, owned, removeSyncDir: !cfg.syncDir, deadlines: deadlinesOf(cfg) }, engine);
  } catch (e) {
    await Promise.all(owned.map((o) => o?.server.close(2000)));
    throw e;
  }
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
