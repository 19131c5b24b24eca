/**
 * A sampler for the embedded engine that runs in a worker thread with its own jax-js runtime and
 * a copy of the policy, so generation overlaps training (rl.async) on a multi-core CPU. Weights
 * reach it through a checkpoint directory after each RL step (safetensors, float32: exact), so it
 * samples what the trainer would sample with the same weights and seed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { Engine, SampleRequest, SampleResult, Sampler } from "../../core/engine.ts";

/** Options of EmbeddedWorkerSampler. */
export interface EmbeddedWorkerSamplerOptions {
  /** jax-js threads of the worker's runtime (default 1: one core samples, the rest train). */
  threads?: number;
}

/**
 * The worker's entry: the compiled module, or — running from TypeScript sources (tests, dev) — a
 * bootstrap that registers tsx in the worker first (loader hooks do not reach worker threads).
 */
function workerEntry(): URL {
  if (!import.meta.url.endsWith(".ts")) return new URL("./embedded-worker-main.js", import.meta.url);
  const main = new URL("./embedded-worker-main.ts", import.meta.url).href;
  const tsx = import.meta.resolve("tsx/esm/api");
  const code = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(main)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}

export class EmbeddedWorkerSampler implements Sampler {
  readonly name = "embedded-worker";
  readonly exact = true;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private held = -1;
  private readonly dir = mkdtempSync(join(tmpdir(), "rlvr-sampler-"));
  private failure: Error | null = null;

  constructor(o: EmbeddedWorkerSamplerOptions = {}) {
    this.worker = new Worker(workerEntry(), { workerData: { threads: o.threads ?? 1 } });
    this.worker.on("message", (m: { id: number; ok: boolean; value?: unknown; error?: string }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.ok) p?.resolve(m.value);
      else p?.reject(new Error(m.error));
    });
    this.worker.on("error", (e) => this.fail(e));
    this.worker.on("exit", (code) => code !== 0 && this.fail(new Error(`sampler worker exited with code ${code}`)));
  }

  private fail(e: Error): void {
    this.failure = e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  private call<T>(msg: Record<string, unknown>): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, ...msg });
    });
  }

  /** Sample with the weights of the last sync (prompt-major results, sampler log-probs). */
  async sample(req: SampleRequest): Promise<SampleResult[]> {
    if (this.held < 0) throw new Error("EmbeddedWorkerSampler: syncWeights must run before the first sample");
    return this.call<SampleResult[]>({ kind: "sample", req });
  }

  /** Copy the trainer's weights (written to a directory, then loaded by the worker). @returns seconds. */
  async syncWeights(engine: Engine, policyVersion: number): Promise<number> {
    const t0 = performance.now();
    const dir = join(this.dir, `v${policyVersion}`);
    await engine.save(dir);
    await this.call<null>({ kind: "load", dir });
    rmSync(dir, { recursive: true, force: true });
    this.held = policyVersion;
    return (performance.now() - t0) / 1000;
  }

  version(): number {
    return this.held;
  }

  async close(): Promise<void> {
    if (!this.failure) await this.call<null>({ kind: "close" }).catch(() => {});
    await this.worker.terminate();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
