/**
 * The `rollout:` block of a run config: which engine samples the rollouts.
 *
 * ```yaml
 * rollout:
 *   engine: vllm          # trainer (default: the training engine samples) | vllm
 *   mode: colocated       # colocated: vLLM inside the torch worker | server: vLLM OpenAI-compatible servers
 *   urls: [http://10.0.0.5:8000, http://10.0.0.6:8000]   # server mode: running servers (else rlvr starts `servers` local ones)
 * ```
 * With `engine: vllm` the trainer re-scores every rollout, the sampler's log-probs are kept for
 * truncated importance sampling (`algorithm.mismatch`, turned on with its defaults unless the
 * config sets it or `mismatchCorrection: false`), and `rollout/logprob_diff` is logged.
 * docs/scaling.md ("vLLM rollouts") describes both modes.
 */
import { z } from "zod";
import { mismatchConfigSchema, type AlgorithmConfig } from "../../algorithms/index.ts";

export const rolloutEngineSchema = z
  .strictObject({
    /** Who samples: "trainer" (the training engine itself) or "vllm". */
    engine: z.enum(["trainer", "vllm", "openai"]).default("trainer"),
    /** engine openai: the server's base URL (e.g. http://127.0.0.1:8000/v1), model id and API key (src/rollout/samplers/openai.ts). */
    baseURL: z.string().regex(/^https?:\/\/\S+$/, "expected an http(s) URL such as http://127.0.0.1:8000/v1").optional(),
    model: z.string().min(1).optional(),
    apiKey: z.string().optional(),
    /** vLLM placement: "colocated" (the torch worker's process; needs model.engine torch) or "server". */
    mode: z.enum(["colocated", "server"]).default("colocated"),
    /** Server mode: base URLs of running vLLM servers (prompts are spread across them). */
    urls: z.array(z.string().regex(/^https?:\/\/\S+$/, "expected an http(s) URL such as http://127.0.0.1:8000")).min(1).optional(),
    /** Server mode without urls: how many local servers rlvr starts (each on a free port). */
    servers: z.number().int().positive().default(1),
    /** Python with vLLM (default $RLVR_VLLM_PYTHON, then python/.venv-vllm from `rlvr setup vllm`). */
    python: z.string().optional(),
    /** GPU only: fraction of GPU memory vLLM may take (weights + KV cache). */
    gpuMemoryUtilization: z.number().gt(0).max(1).default(0.5),
    /** CPU only: KV cache size in GiB (VLLM_CPU_KVCACHE_SPACE). */
    kvCacheGiB: z.number().int("vLLM reads VLLM_CPU_KVCACHE_SPACE as whole GiB: expected an integer >= 1").positive().default(1),
    /** Colocated on GPU: free vLLM's memory between rollouts (sleep level 1 / wake_up). Default: on with a GPU. */
    sleep: z.boolean().optional(),
    /** vLLM's dtype: "auto" (bfloat16 on GPU, float32 on CPU), "float32" or "bfloat16". */
    dtype: z.enum(["auto", "float32", "bfloat16"]).default("auto"),
    /** Server mode: directory for the weight checkpoints the servers reload (must be visible to every server). Default: a temporary directory. */
    syncDir: z.string().optional(),
    /** Turn on truncated importance sampling (algorithm.mismatch) when the config does not set it. */
    mismatchCorrection: z.boolean().default(true),
    /** Seconds to wait for vLLM to start (a server rlvr starts to answer /health, colocated vLLM to load), and for a server's first request after it started (it may still compile). */
    startupTimeoutS: z.number().int().positive().default(900),
    /** Deadline of one rollout request (a server's /v1/completions, colocated vLLM's sampling), seconds. */
    requestTimeoutS: z.number().positive().default(600),
    /** Deadline of one weight sync (a server's reload over /collective_rpc, colocated vLLM's in-memory reload), seconds. */
    syncTimeoutS: z.number().positive().default(600),
    /** Server mode: deadline of one GET /health, seconds (checked before each rollout and, while a server has requests in flight, every healthIntervalS). */
    healthTimeoutS: z.number().positive().default(10),
    /** Server mode: seconds between health checks of a server with requests in flight. */
    healthIntervalS: z.number().positive().default(5),
    /** Server mode: restarts of each server rlvr started after it died or hung, per run (0: never; its prompts still go to the other servers). */
    maxRestarts: z.number().int().min(0).default(3),
    /** Extra command-line arguments for servers rlvr starts. */
    extraArgs: z.array(z.string()).default([]),
  })
  .refine((r) => r.mode === "server" || r.urls === undefined, { message: "urls are for mode: server; remove them or set rollout.mode: server", path: ["urls"] });

export type RolloutEngineConfig = z.output<typeof rolloutEngineSchema>;

/**
 * Config-time defaults that follow from `rollout`: with vLLM rollouts and no `algorithm.mismatch`,
 * mismatch correction turns on with the schema's defaults (token-level TIS, cap 3).
 * @returns the reason of a config error, or null.
 */
export function applyRolloutDefaults(cfg: { rollout?: RolloutEngineConfig; algorithm?: AlgorithmConfig; model: { engine: string; lora?: unknown; distributed?: unknown } }): string | null {
  const r = cfg.rollout;
  if (!r || r.engine !== "vllm") return null;
  if (r.mode === "colocated" && cfg.model.distributed) {
    return "rollout.mode: colocated runs vLLM inside one worker process, not under torchrun (model.distributed); use rollout.mode: server (vLLM servers beside the torchrun group)";
  }
  if (r.mode === "server" && cfg.model.lora) {
    return "model.lora with rollout.mode: server is not supported yet (servers reload full checkpoints); use rollout.mode: colocated, where each sync pushes the adapter through vLLM's LoRA loading";
  }
  if (r.mode === "colocated" && cfg.model.engine !== "torch") {
    return "rollout.mode: colocated runs vLLM inside the torch worker; set model.engine: torch, or use rollout.mode: server";
  }
  if (r.mismatchCorrection && cfg.algorithm && !cfg.algorithm.mismatch) cfg.algorithm.mismatch = mismatchConfigSchema.parse({});
  return null;
}
