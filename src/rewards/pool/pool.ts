/**
 * A pool of worker threads that run verifiers by name with a hard per-call timeout.
 *
 * - A call that runs past its timeout gets its worker terminated (V8 stops even a tight
 *   `while (true)` loop) and replaced; the call resolves `{ok: false, kind: "timeout"}`.
 * - A worker that dies during a call (uncaught async error, out of memory, process.exit) resolves
 *   that call `{ok: false, kind: "crash"}` and is replaced.
 * - A verifier that throws resolves `{ok: false, kind: "error"}`; the worker lives on.
 * - A worker that cannot load its verifier modules (an import that throws, a module that exits
 *   while loading, or one still loading after `loadTimeoutMs`) fails the pool: every queued and
 *   later call resolves `{ok: false, kind: "error"}` at once with a message naming the module,
 *   and no worker is respawned (`loadError` holds the message).
 * - A worker that is terminated (timeout, close) or dies while it runs code sandboxes leaves
 *   nothing behind: its sandboxes are killed first (and reaped by the worker itself when its event
 *   loop is free), then its work dirs, control groups and sandbox slots are reclaimed
 *   (code/sandbox.ts reclaimThreadSandboxes). All workers share the process's one cap on
 *   concurrent sandboxes (code/slots.ts).
 * Nothing here rejects or throws for what a verifier does, so a bad verifier cannot stall or crash
 * a training run. `callScore()` turns outcomes into rewards with configurable fallbacks.
 * Call close() when done: it terminates every worker so the process can exit.
 */
import { Worker } from "node:worker_threads";
import { availableParallelism } from "node:os";
import { moduleSpecifier } from "./specifier.ts";
import { reclaimThreadSandboxes, threadHoldsSandboxes } from "../code/sandbox.ts";
import { killThreadSandboxes, sandboxSlotsBuffer } from "../code/slots.ts";
import { verifierSources } from "../registry.ts";

/** Most time a timed-out worker gets to reap its killed sandboxes before it is terminated, ms. */
const REAP_GRACE_MS = 2000;

/**
 * Stop a worker and everything it started: kill its sandboxes at once, let its own event loop
 * reap them (up to REAP_GRACE_MS; a worker stuck in JavaScript cannot), terminate it, then remove
 * whatever it left (work dirs, control groups, slots). Never rejects.
 */
async function retire(worker: Worker): Promise<void> {
  const tid = worker.threadId;
  if (tid < 0) return;
  if (threadHoldsSandboxes(tid)) {
    killThreadSandboxes(tid);
    try {
      worker.postMessage({ abortSandboxes: true });
    } catch {
      /* already gone */
    }
    const until = performance.now() + REAP_GRACE_MS;
    while (threadHoldsSandboxes(tid) && performance.now() < until) await new Promise((r) => setTimeout(r, 20));
  }
  await worker.terminate().catch(() => 0);
  await reclaimThreadSandboxes(tid).catch(() => undefined);
}

export interface PoolOptions {
  /** Number of worker threads (default: available cores − 1, at least 1). */
  size?: number;
  /** Default hard per-call timeout, ms (default 10 000). Counted from dispatch to a worker. */
  timeoutMs?: number;
  /** Extra modules each worker imports to register verifiers: URLs, paths (relative ones against the working directory) or package names. */
  modules?: string[];
  /** Per-worker V8 heap cap, MiB (worker dies → crash outcome). Default 512. */
  maxHeapMb?: number;
  /** Most time a worker may take to import each of `modules` before the pool fails, ms (default 60 000; rlvr's own modules get at least 120 000). */
  loadTimeoutMs?: number;
  /** Load the math verifier in each worker before it reports ready (default true), so the
   *  first math call is not charged the module's load time. */
  preloadMath?: boolean;
}

export type PoolOutcome =
  | { ok: true; value: unknown; ms: number }
  | { ok: false; kind: "timeout" | "crash" | "error" | "closed"; message: string; ms: number };

export interface PoolStats {
  calls: number;
  ok: number;
  timeouts: number;
  crashes: number;
  errors: number;
  /** Workers started to replace terminated or crashed ones. */
  restarts: number;
}

interface Task {
  id: number;
  name: string;
  args: unknown[];
  timeoutMs: number;
  resolve: (o: PoolOutcome) => void;
  started: number;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  task: Task | null;
  timer: NodeJS.Timeout | null;
  dead: boolean;
  /** The module the worker reported it is importing (until ready). */
  loading: string;
  loadTimer: NodeJS.Timeout | null;
}

const BOOT = new URL("./worker-boot.mjs", import.meta.url);
/** What a worker loads before and after the user's modules (see worker.ts), timed with BUILTIN_LOAD_MS. */
const WORKER_ENTRY = "the worker entry";
const OWN_PARTS = new Set([WORKER_ENTRY, "the built-in verifiers", "the math verifier"]);
/** The least time rlvr's own parts of a worker get to load, ms. */
const BUILTIN_LOAD_MS = 120_000;
const ENTRY = new URL("./worker.ts", import.meta.url).href;

export class VerifierPool {
  readonly size: number;
  readonly timeoutMs: number;
  readonly loadTimeoutMs: number;
  private readonly modules: string[];
  private readonly maxHeapMb: number;
  private readonly preloadMath: boolean;
  private slots: Slot[] = [];
  private queue: Task[] = [];
  private nextId = 1;
  private closed = false;
  private readyWaiters: (() => void)[] = [];
  readonly stats: PoolStats = { calls: 0, ok: 0, timeouts: 0, crashes: 0, errors: 0, restarts: 0 };
  /** Set when a worker could not load its verifier modules; every call then fails fast. */
  loadError: string | null = null;

  constructor(opts: PoolOptions = {}) {
    this.size = Math.max(1, Math.floor(opts.size ?? Math.max(1, availableParallelism() - 1)));
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.loadTimeoutMs = opts.loadTimeoutMs ?? 60_000;
    this.modules = (opts.modules ?? []).map((m) => moduleSpecifier(m));
    this.maxHeapMb = opts.maxHeapMb ?? 512;
    this.preloadMath = opts.preloadMath ?? true;
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const worker = new Worker(BOOT, {
      workerData: { entry: ENTRY, modules: this.modules, sources: verifierSources(), preloadMath: this.preloadMath, sandboxSlots: sandboxSlotsBuffer() },
      resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb },
      stdout: false,
      stderr: false,
    });
    const slot: Slot = { worker, ready: false, task: null, timer: null, dead: false, loading: WORKER_ENTRY, loadTimer: null };
    // Each module gets loadTimeoutMs from the moment the worker starts importing it; rlvr's own
    // parts (the worker entry, the built-in verifiers, the math verifier) get at least BUILTIN_LOAD_MS,
    // as they can be slow to compile on a loaded machine and are not the user's to fix.
    const arm = () => {
      if (slot.loadTimer) clearTimeout(slot.loadTimer);
      const own = OWN_PARTS.has(slot.loading);
      const ms = own ? Math.max(this.loadTimeoutMs, BUILTIN_LOAD_MS) : this.loadTimeoutMs;
      slot.loadTimer = setTimeout(() => {
        if (slot.ready || slot.dead) return;
        const what = own ? slot.loading : `verifier module ${slot.loading}`;
        this.failLoad(`${what} did not finish loading within ${ms} ms${own ? "" : " (does it loop or wait at import?); fix or remove it from rl.verifierPool.modules"}`);
      }, ms);
    };
    arm();
    worker.on("message", (m: { ready?: boolean; loading?: string; error?: string; id?: number; ok?: boolean; value?: unknown }) => {
      if (m.loading !== undefined && m.id === undefined) {
        slot.loading = m.loading;
        arm();
        return;
      }
      if (m.ready !== undefined && m.id === undefined) {
        if (slot.loadTimer) clearTimeout(slot.loadTimer);
        slot.loadTimer = null;
        if (m.ready === false) {
          this.failLoad(`${m.error ?? "a verifier pool worker failed to load"}; check rl.verifierPool.modules`);
          return;
        }
        slot.ready = true;
        this.readyWaiters.splice(0).forEach((r) => r());
        this.pump();
        return;
      }
      const t = slot.task;
      if (!t || m.id !== t.id) return;
      this.finish(slot, m.ok ? { ok: true, value: m.value, ms: performance.now() - t.started } : { ok: false, kind: "error", message: String(m.error), ms: performance.now() - t.started });
    });
    const tid = worker.threadId;
    const onDeath = (why: string) => {
      void reclaimThreadSandboxes(tid).catch(() => undefined);
      if (slot.dead) return;
      slot.dead = true;
      if (slot.loadTimer) clearTimeout(slot.loadTimer);
      slot.loadTimer = null;
      if (!slot.ready) {
        // Died before it could serve: respawning would repeat the same death forever.
        this.failLoad(`a verifier pool worker died while loading ${slot.loading} (${why}); fix or remove it from rl.verifierPool.modules`);
        return;
      }
      const t = slot.task;
      if (t) this.finish(slot, { ok: false, kind: "crash", message: why, ms: performance.now() - t.started });
      this.replace(slot);
    };
    worker.on("error", (e) => onDeath(`worker crashed: ${e.message}`));
    worker.on("exit", (code) => onDeath(`worker exited with code ${code}`));
    return slot;
  }

  private replace(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    if (this.closed || this.loadError) {
      this.slots.splice(i, 1);
      return;
    }
    this.stats.restarts++;
    this.slots[i] = this.spawn();
  }

  private finish(slot: Slot, outcome: PoolOutcome): void {
    const t = slot.task;
    if (!t) return;
    slot.task = null;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    if (outcome.ok) this.stats.ok++;
    else if (outcome.kind === "timeout") this.stats.timeouts++;
    else if (outcome.kind === "crash") this.stats.crashes++;
    else if (outcome.kind === "error") this.stats.errors++;
    t.resolve(outcome);
    this.pump();
  }

  /**
   * The pool cannot load its modules: remember why, fail every queued and running call with that
   * message, and stop every worker (none is respawned; later calls fail at once).
   */
  private failLoad(message: string): void {
    if (this.loadError || this.closed) return;
    this.loadError = message;
    const failed = (started: number): PoolOutcome => ({ ok: false, kind: "error", message, ms: started ? performance.now() - started : 0 });
    for (const t of this.queue.splice(0)) {
      this.stats.errors++;
      t.resolve(failed(0));
    }
    const slots = this.slots.splice(0);
    for (const s of slots) {
      s.dead = true;
      for (const timer of [s.timer, s.loadTimer]) if (timer) clearTimeout(timer);
      if (s.task) {
        const t = s.task;
        s.task = null;
        this.stats.errors++;
        t.resolve(failed(t.started));
      }
      void retire(s.worker);
    }
    this.readyWaiters.splice(0).forEach((r) => r());
  }

  private pump(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (!this.queue.length) return;
      if (!slot.ready || slot.task || slot.dead) continue;
      const t = this.queue.shift()!;
      slot.task = t;
      t.started = performance.now();
      slot.timer = setTimeout(() => {
        if (slot.task !== t) return;
        slot.dead = true;
        this.finish(slot, { ok: false, kind: "timeout", message: `verifier "${t.name}" ran past ${t.timeoutMs} ms`, ms: performance.now() - t.started });
        void retire(slot.worker);
        this.replace(slot);
      }, t.timeoutMs);
      try {
        slot.worker.postMessage({ id: t.id, name: t.name, args: t.args });
      } catch (e) {
        this.finish(slot, { ok: false, kind: "error", message: `arguments cannot be sent to a worker: ${(e as Error).message}`, ms: 0 });
      }
    }
  }

  /** Resolves once every worker has loaded its verifiers, or the pool failed to load them (see `loadError`). */
  async ready(): Promise<void> {
    while (!this.closed && !this.loadError && this.slots.some((s) => !s.ready)) await new Promise<void>((r) => this.readyWaiters.push(r));
  }

  /**
   * Run verifier `name` with `args` (structured-cloneable) on a worker.
   * @returns an outcome; never rejects.
   */
  run(name: string, args: unknown[], opts: { timeoutMs?: number } = {}): Promise<PoolOutcome> {
    this.stats.calls++;
    if (this.closed) return Promise.resolve({ ok: false, kind: "closed", message: "pool is closed", ms: 0 });
    if (this.loadError) {
      this.stats.errors++;
      return Promise.resolve({ ok: false, kind: "error", message: this.loadError, ms: 0 });
    }
    return new Promise<PoolOutcome>((resolve) => {
      this.queue.push({ id: this.nextId++, name, args, timeoutMs: opts.timeoutMs ?? this.timeoutMs, resolve, started: 0 });
      this.pump();
    });
  }

  /**
   * Run a verifier and reduce its outcome to a reward.
   * @param score     maps the verifier's value to a reward (default: `value.reward`, else
   *                  `value.correct` as 0/1, else a number value, else null)
   * @param fallback  reward on timeout / crash / error (default 0; null = skip the sample)
   * @returns the reward and, when the call failed, the event name
   *          ("verifier/timeouts" | "verifier/crashes" | "verifier/errors").
   */
  async callScore(
    name: string,
    args: unknown[],
    opts: { timeoutMs?: number; score?: (value: unknown) => number | null; fallback?: number | null } = {},
  ): Promise<{ value: number | null; event?: string; message?: string; result?: unknown }> {
    const o = await this.run(name, args, opts);
    const fallback = opts.fallback === undefined ? 0 : opts.fallback;
    if (!o.ok) {
      const event = o.kind === "timeout" ? "verifier/timeouts" : o.kind === "crash" ? "verifier/crashes" : "verifier/errors";
      return { value: fallback, event, message: o.message };
    }
    return { value: (opts.score ?? defaultScore)(o.value), result: o.value };
  }

  /** Terminate every worker; pending and later calls resolve `{ok: false, kind: "closed"}`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.queue.splice(0)) t.resolve({ ok: false, kind: "closed", message: "pool closed", ms: 0 });
    const slots = this.slots.splice(0);
    for (const s of slots) {
      for (const timer of [s.timer, s.loadTimer]) if (timer) clearTimeout(timer);
      if (s.task) {
        const t = s.task;
        s.task = null;
        t.resolve({ ok: false, kind: "closed", message: "pool closed", ms: performance.now() - t.started });
      }
    }
    this.readyWaiters.splice(0).forEach((r) => r());
    await Promise.all(slots.map((s) => retire(s.worker)));
  }
}

/** `value.reward` (a Verdict's, number), else `value.correct` as 0/1, else a plain number/boolean, else null. */
export function defaultScore(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value && typeof value === "object") {
    const v = value as { reward?: unknown; correct?: unknown };
    if (typeof v.reward === "number" && Number.isFinite(v.reward)) return v.reward;
    if (typeof v.correct === "boolean") return v.correct ? 1 : 0;
  }
  return null;
}

/** Create a verifier pool (see VerifierPool). */
export function createVerifierPool(opts: PoolOptions = {}): VerifierPool {
  return new VerifierPool(opts);
}
