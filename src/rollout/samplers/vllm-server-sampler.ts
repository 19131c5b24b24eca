/**
 * Server-mode vLLM rollouts that survive a server dying or hanging.
 *
 * Prompt i of a `sample` goes to live server i mod k as one `/v1/completions` request (token ids
 * in and out). After each optimizer step the trainer saves a Hugging Face checkpoint to `syncDir`
 * and every server reloads it in place (`/collective_rpc` → `rlvr_load_weights`).
 *
 * Faults (docs/scaling.md, "When a server dies or hangs"):
 * - every request has a deadline (`rollout.requestTimeoutS`; a server's first request after it
 *   started `rollout.startupTimeoutS`; a reload `rollout.syncTimeoutS`), and while a server has
 *   requests in flight its `/health` is checked every `rollout.healthIntervalS` (a stopped or hung
 *   server fails it within `rollout.healthTimeoutS`); before each `sample` every server's `/health`
 *   is checked too, and a server rlvr started that exits is noticed at once;
 * - a server that fails any of these is declared dead (its process group is killed when rlvr
 *   started it): one line on stderr names it, the call and what happened; its in-flight prompts go
 *   to the other servers (the same seeds, so the same samples), and a sample waits for a restart
 *   when no server is left;
 * - a server rlvr started is restarted on its port (up to `rollout.maxRestarts` times) and reloads
 *   the current policy version before it takes work again; a server given by URL that answers
 *   /health again is resynced and taken back the same way.
 * Only when no server is left and none can come back does a call fail, with one PeerError line.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Engine, SampleRequest, SampleResult, Sampler } from "../../core/engine.ts";
import { PeerError } from "../../util/peer.ts";
import { startVllmServer, type LocalVllmServer, type VllmServerArgs } from "./vllm-server.ts";

/** Deadlines and health checks of server-mode rollouts, seconds (the rollout.* fields of the same names). */
export interface ServerDeadlines {
  /** One /v1/completions request (rollout.requestTimeoutS). */
  requestTimeoutS: number;
  /** The start of a server rlvr launches, and its first request (which may still compile) (rollout.startupTimeoutS). */
  startupTimeoutS: number;
  /** One weight reload on one server (rollout.syncTimeoutS). */
  syncTimeoutS: number;
  /** One GET /health (rollout.healthTimeoutS). */
  healthTimeoutS: number;
  /** Between health checks of a server while it has requests in flight (rollout.healthIntervalS). */
  healthIntervalS: number;
  /** Restarts of each server rlvr started, per run (rollout.maxRestarts). */
  maxRestarts: number;
}

export const DEFAULT_DEADLINES: ServerDeadlines = { requestTimeoutS: 600, startupTimeoutS: 900, syncTimeoutS: 600, healthTimeoutS: 10, healthIntervalS: 5, maxRestarts: 3 };

/** How to start a server again (a server rlvr launched). */
export interface RestartSpec {
  python: string;
  args: VllmServerArgs;
  kvCacheGiB: number;
  onLog?: (line: string) => void;
}

/** Options of a server-mode sampler. */
export interface VllmServerOptions {
  /** Base URLs of the servers (no trailing /v1). */
  urls: string[];
  /** Directory for weight checkpoints the servers reload (must be visible to every server; default: a temporary directory, removed on close). */
  syncDir?: string;
  /** Deadlines (default DEFAULT_DEADLINES). */
  deadlines?: Partial<ServerDeadlines>;
  /** Servers this sampler started (same order as urls), restarted after a fault and stopped on close(). */
  owned?: { server: LocalVllmServer; restart: RestartSpec }[];
  /** Remove syncDir on close() (a temporary directory made for this sampler). */
  removeSyncDir?: boolean;
  /** Receives one line per fault and recovery (default: stderr). */
  onFault?: (line: string) => void;
}

interface Slot {
  url: string;
  model: string;
  state: "ready" | "starting" | "dead";
  /** Aborted (with the PeerError) when the server is declared dead: its in-flight requests stop. */
  abort: AbortController;
  inflight: number;
  poll: NodeJS.Timeout | null;
  /** No request answered since it (re)started: the first one may compile (startupTimeoutS). */
  fresh: boolean;
  restarting: Promise<void> | null;
  restarts: number;
  server?: LocalVllmServer;
  restart?: RestartSpec;
}

interface CompletionChoice {
  index: number;
  token_ids?: number[];
  logprobs?: { token_logprobs?: (number | null)[] } | null;
  finish_reason?: string | null;
}

/** @throws Error on a request no engine can sample (n < 1, an empty prompt). */
export function checkRequest(req: SampleRequest): void {
  if (!(req.n >= 1)) throw new Error(`sample: n must be >= 1, got ${req.n}`);
  req.prompts.forEach((p, i) => {
    if (p.length === 0) throw new Error(`sample: prompt ${i} is empty; every prompt needs at least one token`);
  });
}

/** Why fetch failed, in a few words ("ECONNREFUSED", "other side closed"). */
function cause(e: unknown): string {
  const c = (e as { cause?: { code?: string; message?: string } }).cause;
  return c?.code ?? c?.message ?? (e as Error).message;
}

/** A sampler that spreads prompts across vLLM OpenAI-compatible servers and recovers from their faults. */
export class VllmServerSampler implements Sampler {
  readonly name = "vllm-server";
  /** -1 until the loop's first sync: the weights pushed at start may predate an SFT stage. */
  private policyVersion = -1;
  /** The newest weights: what a restarted server loads. */
  private current: { dir: string; version: number } | null = null;
  private readonly stale = new Set<string>();
  private readonly slots: Slot[];
  private readonly d: ServerDeadlines;
  private readonly closing = new AbortController();
  private readonly log: (line: string) => void;
  private readonly syncDir: string;
  private readonly removeSyncDir: boolean;
  /** Faults seen (servers declared dead) and servers brought back, for tests and metrics. */
  readonly faults = { dead: 0, back: 0 };

  private constructor(
    models: string[],
    private readonly opts: VllmServerOptions,
  ) {
    this.d = { ...DEFAULT_DEADLINES, ...opts.deadlines };
    this.syncDir = opts.syncDir ?? mkdtempSync(join(tmpdir(), "rlvr-vllm-sync-"));
    this.removeSyncDir = !opts.syncDir || !!opts.removeSyncDir;
    this.log = opts.onFault ?? ((line) => process.stderr.write(`rlvr: ${line}\n`));
    this.slots = opts.urls.map((u, i) => {
      const own = opts.owned?.[i];
      const slot: Slot = { url: u.replace(/\/+$/, ""), model: models[i]!, state: "ready", abort: new AbortController(), inflight: 0, poll: null, fresh: true, restarting: null, restarts: 0, ...(own ? { server: own.server, restart: own.restart } : {}) };
      if (own) this.watchExit(slot, own.server);
      return slot;
    });
  }

  /** Base URLs of the servers. */
  get urls(): string[] {
    return this.slots.map((s) => s.url);
  }

  /** The process group leaders of the servers this sampler started (tests: fault injection, leftovers). */
  pids(): (number | undefined)[] {
    return this.slots.map((s) => s.server?.process.pid);
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
        throw new Error(`config error at rollout.urls: ${base} does not answer (${cause(e)}); start the server first (docs/scaling.md, "vLLM rollouts")`);
      }
      const j = (await r.json()) as { data?: { id: string }[] };
      const id = j.data?.[0]?.id;
      if (!id) throw new Error(`config error at rollout.urls: ${base}/v1/models lists no model`);
      models.push(id);
    }
    const s = new VllmServerSampler(models, opts);
    if (engine) {
      await s.syncWeights(engine, 0);
      s.policyVersion = -1; // see policyVersion: the RL loop syncs again before its first collect
    }
    return s;
  }

  async sample(req: SampleRequest): Promise<SampleResult[]> {
    checkRequest(req);
    await this.checkBetweenSteps();
    const perPrompt = await Promise.all(req.prompts.map((_, i) => this.samplePrompt(req, i)));
    return perPrompt.flat();
  }

  /**
   * Save `engine`'s weights under syncDir/v<version> and have every live server reload them in
   * place; a server that fails is declared dead (and reloads these weights when it comes back).
   * @returns wall seconds (save + reload on all servers).
   */
  async syncWeights(engine: Engine, policyVersion: number): Promise<number> {
    const t0 = performance.now();
    const dir = join(this.syncDir, `v${policyVersion}`);
    await engine.save(dir);
    if (this.current && this.current.dir !== dir) this.stale.add(this.current.dir);
    this.current = { dir, version: policyVersion };
    await Promise.all(this.slots.filter((s) => s.state === "ready").map((s) => this.guard(s, () => this.reload(s, dir))));
    this.purge();
    this.policyVersion = policyVersion;
    return (performance.now() - t0) / 1000;
  }

  /** The version last synced by the loop; -1 before its first sync (so the loop syncs before its first collect, e.g. after SFT). */
  version(): number {
    return this.policyVersion;
  }

  async close(): Promise<void> {
    this.closing.abort();
    for (const s of this.slots) this.stopPoll(s);
    await Promise.all(this.slots.map((s) => s.server?.close()));
    await Promise.all(this.slots.map((s) => s.restarting));
    if (this.removeSyncDir) rmSync(this.syncDir, { recursive: true, force: true });
  }

  // ------------------------------------------------------------------ one prompt, one reload

  /** Prompt i's n samples from a live server; on a server fault, from another (or the same, restarted). */
  private async samplePrompt(req: SampleRequest, i: number): Promise<SampleResult[]> {
    for (;;) {
      const slot = await this.pick(i);
      const out = await this.guard(slot, () => this.complete(slot, req, i));
      if (out) return out;
    }
  }

  /** Run `fn` against `slot`; a PeerError declares the server dead and gives undefined. */
  private async guard<T>(slot: Slot, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof PeerError) || this.closing.signal.aborted) throw e;
      this.markDead(slot, e);
      return undefined;
    }
  }

  /** The live server for prompt i (i mod live servers); waits for a restart when none is live. */
  private async pick(i: number): Promise<Slot> {
    for (;;) {
      const ready = this.slots.filter((s) => s.state === "ready");
      if (ready.length > 0) return ready[i % ready.length]!;
      const coming = this.slots.map((s) => s.restarting).filter((p) => p !== null);
      if (coming.length === 0) {
        throw new PeerError(`vLLM servers ${this.urls.join(", ")}`, "POST /v1/completions", "failed: every server is down and none can be restarted (restart servers you started yourself, then resume the run)");
      }
      await Promise.race(coming);
    }
  }

  private async complete(slot: Slot, req: SampleRequest, i: number): Promise<SampleResult[]> {
    const stops = req.stopTokens ?? [];
    const greedy = req.temperature <= 0;
    const body = {
      model: slot.model,
      prompt: Array.from(req.prompts[i]!),
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
    const [secs, field] = slot.fresh ? [this.d.startupTimeoutS, "rollout.startupTimeoutS"] : [this.d.requestTimeoutS, "rollout.requestTimeoutS"];
    const j = (await this.post(slot, "/v1/completions", body, secs, field)) as { choices?: CompletionChoice[] };
    slot.fresh = false;
    return parseChoices(slot.url, j.choices ?? [], req, i);
  }

  private async reload(slot: Slot, dir: string): Promise<void> {
    await this.post(slot, "/collective_rpc", { method: "rlvr_load_weights", kwargs: { weights_path: dir } }, this.d.syncTimeoutS, "rollout.syncTimeoutS");
    await this.post(slot, "/update_weight_version", { new_version: String(this.current?.version ?? 0) }, this.d.syncTimeoutS, "rollout.syncTimeoutS").catch((e) => {
      if (e instanceof PeerError) throw e; // an older vLLM without the route answers 404: fine
    });
  }

  /**
   * POST JSON with a deadline, while /health is polled.
   * @throws PeerError when the server does not answer in time, cannot be reached or was declared
   *         dead meanwhile; Error when it answers with an error status (not a fault of the server).
   */
  private async post(slot: Slot, path: string, body: unknown, seconds: number, field: string): Promise<unknown> {
    const call = `POST ${path}`;
    const timeout = AbortSignal.timeout(seconds * 1000);
    const signal = AbortSignal.any([slot.abort.signal, timeout, this.closing.signal]);
    this.track(slot, +1);
    let r: Response;
    let text: string;
    try {
      r = await fetch(`${slot.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal });
      text = await r.text();
    } catch (e) {
      if (slot.abort.signal.aborted) throw slot.abort.signal.reason as PeerError;
      if (timeout.aborted) throw PeerError.timeout(`vLLM server ${slot.url}`, call, seconds, field);
      throw new PeerError(`vLLM server ${slot.url}`, call, `failed (${cause(e)})`);
    } finally {
      this.track(slot, -1);
    }
    if (!r.ok) throw new Error(`vLLM server ${slot.url}: ${call} answered ${r.status}: ${text.slice(0, 400)}`);
    return text ? JSON.parse(text) : null;
  }

  // ------------------------------------------------------------------ health

  /** GET /health within healthTimeoutS. @throws PeerError */
  private async health(slot: Slot, during: string): Promise<void> {
    const secs = this.d.healthTimeoutS;
    let r: Response;
    try {
      r = await fetch(`${slot.url}/health`, { signal: AbortSignal.any([AbortSignal.timeout(secs * 1000), this.closing.signal]) });
      await r.text();
    } catch (e) {
      if (this.closing.signal.aborted) return;
      const what = (e as Error).name === "TimeoutError" ? `did not answer within ${secs} s ${during}` : `failed (${cause(e)}) ${during}`;
      throw new PeerError(`vLLM server ${slot.url}`, "GET /health", what, (e as Error).name === "TimeoutError" ? "rollout.healthTimeoutS" : null);
    }
    if (!r.ok) throw new PeerError(`vLLM server ${slot.url}`, "GET /health", `answered ${r.status} ${during}`);
  }

  /** Before a step's requests: every live server answers /health; a server given by URL that is back is resynced. */
  private async checkBetweenSteps(): Promise<void> {
    await Promise.all(
      this.slots.map(async (s) => {
        if (s.state === "ready") await this.guard(s, () => this.health(s, "before the rollout"));
        else if (s.state === "dead" && !s.restart && !s.restarting && this.current) {
          const back = await this.health(s, "").then(() => true, () => false);
          if (back) await (s.restarting = this.bringBack(s, false)); // a reload: the server takes this rollout's work
        }
      }),
    );
  }

  /** Count in-flight requests; poll /health while there are some. */
  private track(slot: Slot, delta: number): void {
    slot.inflight += delta;
    if (slot.inflight > 0 && !slot.poll && slot.state === "ready") {
      let busy = false;
      slot.poll = setInterval(() => {
        if (busy) return;
        busy = true;
        this.guard(slot, () => this.health(slot, "while a request was in flight"))
          .catch(() => undefined)
          .finally(() => (busy = false));
      }, this.d.healthIntervalS * 1000);
    }
    if (slot.inflight === 0) this.stopPoll(slot);
  }

  private stopPoll(slot: Slot): void {
    if (slot.poll) clearInterval(slot.poll);
    slot.poll = null;
  }

  // ------------------------------------------------------------------ death and restart

  /** A server rlvr started that exits is dead at once (no need to wait for a deadline). */
  private watchExit(slot: Slot, server: LocalVllmServer): void {
    server.process.once("exit", (code, sig) => {
      if (slot.server === server && slot.state === "ready" && !this.closing.signal.aborted) {
        this.markDead(slot, new PeerError(`vLLM server ${slot.url}`, "its process", `exited (${sig ? `signal ${sig}` : `code ${code}`})`));
      }
    });
  }

  /** Declare `slot` dead: stop its requests, kill what rlvr started, say so, restart it when rlvr can. */
  private markDead(slot: Slot, e: PeerError): void {
    if (slot.state !== "ready") return;
    slot.state = "dead";
    this.faults.dead++;
    slot.abort.abort(e);
    this.stopPoll(slot);
    slot.server?.kill();
    const restart = slot.restart !== undefined && slot.restarts < this.d.maxRestarts;
    const others = this.slots.filter((s) => s.state === "ready").length;
    this.log(`${e.message}${this.current ? ` (policy version ${this.current.version})` : ""}; ${others > 0 ? "its prompts go to the other servers" : "no other server is live"}${restart ? "; restarting it" : slot.restart ? `; not restarted (rollout.maxRestarts ${this.d.maxRestarts} reached)` : ""}`);
    if (restart) slot.restarting = this.bringBack(slot, true);
  }

  /** Restart (or re-admit) a server: start it on its port, load the newest weights, then take work again. */
  private async bringBack(slot: Slot, spawn: boolean): Promise<void> {
    const t0 = performance.now();
    slot.state = "starting";
    slot.abort = new AbortController();
    try {
      if (spawn) {
        const spec = slot.restart!;
        slot.restarts++;
        // Its model directory must exist while it starts: the newest weights (purge keeps them).
        const server = await startVllmServer(spec.python, { ...spec.args, model: this.current!.dir }, { kvCacheGiB: spec.kvCacheGiB, timeoutS: this.d.startupTimeoutS, onLog: spec.onLog, signal: this.closing.signal });
        slot.server = server;
        this.watchExit(slot, server);
        slot.model = await servedModel(slot.url); // vLLM names the model after its directory
      }
      let loaded: string | null = null;
      while (loaded !== this.current!.dir) {
        loaded = this.current!.dir;
        await this.reload(slot, loaded);
      }
      if (this.closing.signal.aborted) return;
      slot.state = "ready";
      slot.fresh = true;
      this.faults.back++;
      this.log(`vLLM server ${slot.url} is back (${spawn ? "restarted" : "answering again"} in ${((performance.now() - t0) / 1000).toFixed(0)} s, synced to policy version ${this.current!.version})`);
    } catch (e) {
      slot.state = "dead";
      slot.server?.kill();
      if (!this.closing.signal.aborted) this.log(`vLLM server ${slot.url} could not be brought back: ${(e as Error).message.split("\n")[0]}; continuing without it`);
    } finally {
      slot.restarting = null;
      this.purge();
    }
  }

  /** Delete superseded weight directories once no server is starting from one. */
  private purge(): void {
    if (this.slots.some((s) => s.state === "starting")) return;
    for (const d of this.stale) if (d !== this.current?.dir) rmSync(d, { recursive: true, force: true });
    this.stale.clear();
  }
}

/** The model id a server serves (GET /v1/models). @throws PeerError naming the server. */
async function servedModel(url: string): Promise<string> {
  try {
    const r = await fetch(`${url}/v1/models`, { signal: AbortSignal.timeout(30_000) });
    const id = ((await r.json()) as { data?: { id: string }[] }).data?.[0]?.id;
    if (id) return id;
  } catch (e) {
    throw new PeerError(`vLLM server ${url}`, "GET /v1/models", `failed (${cause(e)})`);
  }
  throw new PeerError(`vLLM server ${url}`, "GET /v1/models", "lists no model");
}

/** Prompt i's choices as SampleResults (sorted by index). @throws naming the server on a malformed reply. */
function parseChoices(url: string, raw: CompletionChoice[], req: SampleRequest, i: number): SampleResult[] {
  const choices = [...raw].sort((a, b) => a.index - b.index);
  if (choices.length !== req.n) throw new Error(`vLLM server ${url} returned ${choices.length} completions for prompt ${i}, expected ${req.n}`);
  const stopSet = new Set(req.stopTokens ?? []);
  return choices.map((c): SampleResult => {
    if (!c.token_ids) throw new Error(`vLLM server ${url} returned no token_ids (needs vLLM >= 0.10 with return_token_ids)`);
    const ids = c.token_ids.slice(0, req.maxNewTokens);
    const lps = c.logprobs?.token_logprobs ?? [];
    if (lps.length < ids.length) throw new Error(`vLLM server ${url} returned ${lps.length} log-probs for ${ids.length} tokens`);
    const last = ids[ids.length - 1];
    return {
      promptIndex: i,
      tokens: Int32Array.from(ids),
      logprobs: Float32Array.from(ids.map((_, t) => lps[t] ?? NaN)),
      stopReason: last !== undefined && stopSet.has(last) ? "completed" : "max_tokens",
    };
  });
}
