/**
 * A rollout sampler over any OpenAI-compatible server (`rollout: {engine: openai, baseURL,
 * model, apiKey?}`), through the official `openai` SDK: `rlvr serve`, vLLM (≥ 0.10.2), or any
 * server that takes token-id prompts on /v1/completions and returns token ids.
 *
 * One `sample` is one /v1/completions request: every prompt as a token-id list, `n`, `seed`,
 * `logprobs: 1` and vLLM's `return_token_ids`, so the results are exact tokens with the server's
 * log-probs, prompt-major (choice index = prompt × n + j) as `Engine.sample`. Against
 * `rlvr serve` the results equal the served engine's own `sample` for the same seed.
 * `stopTokens` go as vLLM's `stop_token_ids`; `rlvr serve` always stops at the model's EOS.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { APIConnectionError, APIConnectionTimeoutError } from "openai";
import { PeerError } from "../../util/peer.ts";
import type { Engine, EngineInfo, SampleRequest, SampleResult, Sampler } from "../../core/engine.ts";

export interface OpenAISamplerOptions {
  /** Base URL of the API, e.g. "http://127.0.0.1:8000/v1". */
  baseURL: string;
  /** Model id the server knows (GET /v1/models). */
  model: string;
  /** API key (default $OPENAI_API_KEY, else "unused": local servers do not check it). */
  apiKey?: string;
  /** Deadline of one sampling request, seconds (default 600; the SDK retries twice, each with this deadline). */
  timeoutS?: number;
  /** Deadline of one weight sync (POST /rlvr/weights), seconds (default 600). */
  syncTimeoutS?: number;
  /** Where syncWeights writes checkpoints for the server to load (default: a temporary directory). */
  syncDir?: string;
}

interface ChoiceWithIds {
  index: number;
  finish_reason: string | null;
  token_ids?: number[] | null;
  logprobs?: { token_logprobs?: (number | null)[] | null } | null;
}

export class OpenAISampler implements Sampler {
  readonly name = "openai";
  readonly client: OpenAI;
  /** Policy version the server holds: -1 until the first sync (so an RL loop syncs before it samples). */
  private synced = -1;
  private syncDir: string | null = null;
  private lastDir: string | null = null;

  constructor(readonly opts: OpenAISamplerOptions) {
    this.client = new OpenAI({ baseURL: opts.baseURL, apiKey: opts.apiKey ?? process.env.OPENAI_API_KEY ?? "unused", timeout: (opts.timeoutS ?? 600) * 1000, maxRetries: 2 });
  }

  /**
   * Sample through the server. Results are prompt-major, with the server's token ids and log-probs.
   * @throws Error naming the server when it answers with an error or without token ids.
   */
  async sample(req: SampleRequest): Promise<SampleResult[]> {
    const body = {
      model: this.opts.model,
      prompt: req.prompts.map((p) => Array.from(p)),
      n: req.n,
      max_tokens: req.maxNewTokens,
      temperature: req.temperature,
      top_p: req.topP ?? 1,
      seed: req.seed,
      logprobs: 1,
      return_token_ids: true,
      ...(req.topK ? { top_k: req.topK } : {}),
      ...(req.stopTokens && req.stopTokens.length > 0 ? { stop_token_ids: req.stopTokens } : {}),
    };
    let res: { choices: unknown[] };
    try {
      res = (await this.client.completions.create(body as never)) as unknown as { choices: unknown[] };
    } catch (e) {
      const peer = `OpenAI-compatible server ${this.opts.baseURL}`;
      if (e instanceof APIConnectionTimeoutError) throw PeerError.timeout(peer, "POST /completions", this.opts.timeoutS ?? 600, "rollout.requestTimeoutS");
      if (e instanceof APIConnectionError) throw new PeerError(peer, "POST /completions", `failed (${e.message})`);
      throw new Error(`rollout.engine openai: ${this.opts.baseURL} answered: ${(e as Error).message}`);
    }
    const choices = (res.choices as ChoiceWithIds[]).slice().sort((a, b) => a.index - b.index);
    if (choices.length !== req.prompts.length * req.n) throw new Error(`rollout.engine openai: ${this.opts.baseURL} returned ${choices.length} choices for ${req.prompts.length} prompts × n ${req.n}`);
    return choices.map((c, k) => {
      if (!Array.isArray(c.token_ids)) throw new Error(`rollout.engine openai: ${this.opts.baseURL} returned no token ids; the server must support vLLM's return_token_ids (vLLM >= 0.10.2, or rlvr serve)`);
      const lps = c.logprobs?.token_logprobs ?? [];
      return {
        promptIndex: Math.floor(k / req.n),
        tokens: Int32Array.from(c.token_ids),
        logprobs: Float32Array.from(c.token_ids.map((_, t) => lps[t] ?? 0)),
        stopReason: c.finish_reason === "length" ? "max_tokens" : "completed",
      };
    });
  }

  /**
   * Push the trainer's weights to the server: save a checkpoint under syncDir and ask the server
   * to load it (POST {baseURL}/rlvr/weights; `rlvr serve --weight-sync` answers it). The server
   * must see the same filesystem. Other servers cannot take weights: use them for evaluation and
   * teachers, or vLLM's own sampler (rollout: {engine: vllm, mode: server}) for RL.
   * @returns seconds spent
   * @throws Error naming the server when it refuses.
   */
  async syncWeights(engine: Engine, policyVersion: number): Promise<number> {
    const t0 = performance.now();
    this.syncDir ??= this.opts.syncDir ?? mkdtempSync(join(tmpdir(), "rlvr-openai-sync-"));
    const dir = join(this.syncDir, `v${policyVersion}`);
    await engine.save(dir, { optimizer: false });
    const secs = this.opts.syncTimeoutS ?? 600;
    let res: Response;
    try {
      res = await fetch(`${this.opts.baseURL.replace(/\/$/, "")}/rlvr/weights`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${this.client.apiKey}` }, body: JSON.stringify({ path: dir, policy_version: policyVersion }), signal: AbortSignal.timeout(secs * 1000) });
    } catch (e) {
      const peer = `OpenAI-compatible server ${this.opts.baseURL}`;
      if ((e as Error).name === "TimeoutError") throw PeerError.timeout(peer, "POST /rlvr/weights", secs, "rollout.syncTimeoutS");
      throw new PeerError(peer, "POST /rlvr/weights", `failed (${(e as Error).message})`);
    }
    if (!res.ok) throw new Error(`rollout.engine openai: ${this.opts.baseURL} did not take the new weights (${res.status}: ${(await res.text()).slice(0, 300)}); for RL the server must be rlvr serve --weight-sync on this machine`);
    if (this.lastDir) rmSync(this.lastDir, { recursive: true, force: true });
    this.lastDir = dir;
    this.synced = policyVersion;
    return (performance.now() - t0) / 1000;
  }

  /** The version last synced (-1 before the first sync). */
  version(): number {
    return this.synced;
  }

  /** Remove the sync directory when the sampler made it. */
  async close(): Promise<void> {
    if (this.syncDir && !this.opts.syncDir) rmSync(this.syncDir, { recursive: true, force: true });
  }

  /** The served model's context length (`max_model_len` of GET /v1/models, as vLLM and rlvr serve report it), or null. */
  async maxModelLen(): Promise<number | null> {
    const list = await this.client.models.list();
    const m = list.data.find((x) => x.id === this.opts.model) as unknown as { max_model_len?: number } | undefined;
    return typeof m?.max_model_len === "number" ? m.max_model_len : null;
  }
}

/**
 * The API base of a server URL: a bare origin ("http://host:8000", trailing slash or not) gets
 * "/v1", where OpenAI-compatible servers (vLLM, rlvr serve) answer; a URL with a path is kept.
 */
export function withApiPath(url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  let u: URL;
  try {
    u = new URL(trimmed);
  } catch {
    throw new Error(`--endpoint ${url}: not a URL; give the server's base URL, e.g. http://127.0.0.1:8000 or http://127.0.0.1:8000/v1`);
  }
  return u.pathname === "/" || u.pathname === "" ? `${trimmed}/v1` : trimmed;
}

/**
 * An Engine whose `sample` goes to an OpenAI-compatible endpoint, for sampling-only callers
 * (`rlvr eval --endpoint`), at `given` with or without /v1 (withApiPath). `model` defaults to the server's first model. Scoring, training and
 * checkpoint calls throw: the weights are on the server.
 */
export async function endpointEngine(given: string, model?: string, apiKey?: string): Promise<Engine> {
  const baseURL = withApiPath(given);
  const probe = new OpenAISampler({ baseURL, model: model ?? "", apiKey });
  let name = model;
  if (!name) {
    const list = await probe.client.models.list();
    name = list.data[0]?.id;
    if (!name) throw new Error(`--endpoint ${baseURL}: the server lists no models (GET /models)`);
  }
  const s = new OpenAISampler({ baseURL, model: name, apiKey });
  const maxSeqLen = (await s.maxModelLen()) ?? Number.MAX_SAFE_INTEGER;
  const info: EngineInfo = { engine: "openai", modelId: `${name} @ ${baseURL}`, vocabSize: 0, maxSeqLen, numParams: 0, device: "remote", dtype: "unknown" };
  const no = (what: string) => async (): Promise<never> => {
    throw new Error(`${what} is not available through an OpenAI-compatible endpoint (${baseURL}); the endpoint only samples`);
  };
  return { info: () => info, sample: (r) => s.sample(r), score: no("score"), forwardBackward: no("forwardBackward"), optimStep: no("optimStep"), setReference: no("setReference"), save: no("save"), load: no("load"), close: async () => {} };
}

/** The sampler of `rollout: {engine: openai, ...}`. @throws Error naming the missing field. */
export function openAISamplerFromConfig(r: { baseURL?: string; model?: string; apiKey?: string; syncDir?: string; requestTimeoutS?: number; syncTimeoutS?: number }): OpenAISampler {
  if (!r.baseURL) throw new Error("config error at rollout.baseURL: engine openai needs the server's base URL, e.g. http://127.0.0.1:8000/v1");
  if (!r.model) throw new Error("config error at rollout.model: engine openai needs the model id the server serves (GET /v1/models)");
  return new OpenAISampler({ baseURL: r.baseURL, model: r.model, apiKey: r.apiKey, syncDir: r.syncDir, timeoutS: r.requestTimeoutS, syncTimeoutS: r.syncTimeoutS });
}
