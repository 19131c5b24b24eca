/**
 * The request batcher: concurrent requests that arrive within a short window (default 5 ms), or
 * while the engine is busy, are grouped by their sampling settings and each group is one
 * `engine.sample` call (static batching; continuous batching is not attempted).
 *
 * Reproducibility: a request that names a `seed` is never merged with another, so its responses
 * equal `engine.sample({prompts: <its prompts>, n, seed, ...})` exactly. Requests without a seed
 * share a call and a fresh server seed.
 *
 * Engine calls run one at a time under a lock that training also takes (`exclusive`), so a
 * policy update waits for the calls in flight and each call samples from one policy version,
 * which it reports.
 */
import type { SampleRequest, SampleResult } from "../core/engine.ts";

/** Sampling settings that must be equal for two requests to share an engine call. */
export interface SamplingKey {
  n: number;
  temperature: number;
  topP: number;
  maxNewTokens: number;
  /** Set: the request is sampled alone with this seed. */
  seed?: number;
}

/** What a request gets back: its results (prompt-major, promptIndex local to the request). */
export interface BatchOutput {
  results: SampleResult[];
  /** Policy version of the weights that sampled them. */
  policyVersion: number;
}

interface Job {
  prompts: Int32Array[];
  key: SamplingKey;
  resolve: (o: BatchOutput) => void;
  reject: (e: unknown) => void;
}

export interface BatcherOptions {
  /** Milliseconds to wait for more requests after the first (default 5). */
  windowMs?: number;
  /** Token ids that end a sample (the tokenizer's EOS). */
  stopTokens: number[];
  /** Most sampled rows (prompts × n) in one engine call (default 64). */
  maxRows?: number;
  /** First server seed of unseeded calls (default 1); later calls count up. */
  seed?: number;
}

/** A mutex: `run(fn)` runs fn after every earlier fn finished. */
export class Lock {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const out = this.tail.then(fn, fn);
    this.tail = out.catch(() => {});
    return out;
  }
}

export class Batcher {
  private pending: Job[] = [];
  private timer: NodeJS.Timeout | null = null;
  private nextSeed: number;
  private draining = false;
  private readonly lock = new Lock();
  /** Number of engine calls and requests answered (for benchmarks). */
  readonly stats = { calls: 0, requests: 0 };

  constructor(
    private readonly sample: (req: SampleRequest) => Promise<SampleResult[]>,
    private readonly version: () => number,
    private readonly o: BatcherOptions,
  ) {
    this.nextSeed = o.seed ?? 1;
  }

  /** Queue a request; resolves when its engine call is done, rejects with the engine's error. */
  submit(prompts: Int32Array[], key: SamplingKey): Promise<BatchOutput> {
    return new Promise((resolve, reject) => {
      this.pending.push({ prompts, key, resolve, reject });
      if (!this.timer) this.timer = setTimeout(() => this.flush(), this.o.windowMs ?? 5);
    });
  }

  /** Run `fn` (e.g. an optimizer update) when no engine call is in flight; calls queued meanwhile wait. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.run(fn);
  }

  /** After the window: take the lock, then drain everything pending by then (requests that came while the engine was busy included). */
  private flush(): void {
    this.timer = null;
    if (this.draining) return;
    this.draining = true;
    void this.lock.run(() => this.drain());
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const jobs = this.pending;
      this.pending = [];
      for (const call of this.group(jobs)) await this.run(call);
    }
    this.draining = false;
  }

  /** Engine calls for `jobs`: equal sampling settings share a call (up to maxRows rows); seeded jobs go alone. */
  private group(jobs: Job[]): Job[][] {
    const open = new Map<string, Job[]>();
    const calls: Job[][] = [];
    const maxRows = this.o.maxRows ?? 64;
    const rows = (c: Job[]) => c.reduce((s, x) => s + x.prompts.length * x.key.n, 0);
    for (const j of jobs) {
      const k = j.key;
      if (k.seed !== undefined) {
        calls.push([j]);
        continue;
      }
      const id = `${k.n}|${k.temperature}|${k.topP}|${k.maxNewTokens}`;
      const cur = open.get(id);
      if (cur && rows(cur) + j.prompts.length * k.n <= maxRows) cur.push(j);
      else {
        const c = [j];
        open.set(id, c);
        calls.push(c);
      }
    }
    return calls;
  }

  private async run(call: Job[]): Promise<void> {
    const k = call[0]!.key;
    const prompts = call.flatMap((j) => j.prompts);
    const seed = k.seed ?? this.nextSeed++;
    try {
      const policyVersion = this.version();
      const results = await this.sample({ prompts, n: k.n, maxNewTokens: k.maxNewTokens, temperature: k.temperature, topP: k.topP, seed, stopTokens: this.o.stopTokens });
      this.stats.calls++;
      let offset = 0;
      for (const j of call) {
        const mine = results.filter((r) => r.promptIndex >= offset && r.promptIndex < offset + j.prompts.length).map((r) => ({ ...r, promptIndex: r.promptIndex - offset }));
        offset += j.prompts.length;
        this.stats.requests++;
        j.resolve({ results: mine, policyVersion });
      }
    } catch (e) {
      for (const j of call) j.reject(e);
    }
  }
}
