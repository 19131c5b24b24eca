/**
 * A TypeScript client of the Tinker API (`rlvr/tinker`), with the Python SDK's three clients and
 * call names in camelCase: `ServiceClient` (session, capabilities, new clients),
 * `TrainingClient` (forward, forwardBackward, optimStep, saveState, loadState,
 * saveWeightsForSampler, saveWeightsAndGetSamplingClient) and `SamplingClient` (sample,
 * computeLogprobs). It speaks the wire protocol of tinker 0.38 — JSON requests, protobuf
 * forward_backward bodies and results, futures polled through `retrieve_future` — so it talks to
 * `rlvr tinker` or any server that serves that protocol.
 *
 * Differences from the Python SDK: calls return Promises (await them; a TrainingClient sends its
 * requests in call order, as the SDK does); a model input is a list of token ids; loss inputs are
 * plain number arrays (`target_tokens` is sent as int64, every other input as float32).
 */
import {
  decodeForwardBackwardOutput,
  decodeSampleResponse,
  encodeForwardBackwardRequest,
  type DecodedSampleResponse,
} from "./proto.ts";

/** One training example: input tokens and per-position loss inputs (all the same length). */
export interface Datum {
  /** Input token ids x[0..n). */
  modelInput: number[];
  /** `target_tokens` (required) and the loss's inputs: `weights`, `logprobs`, `advantages`, …, each length n. */
  lossFnInputs: Record<string, ArrayLike<number>>;
}

/** Result of forward / forwardBackward: per datum its outputs (`logprobs`, …) and the metrics (`loss:sum`). */
export interface ForwardBackwardOutput {
  lossFnOutputs: Record<string, Float32Array>[];
  metrics: Record<string, number>;
}

/** AdamW parameters; defaults are Tinker's (lr 1e-4, β1 0.9, β2 0.95, ε 1e-12, no decay, no clipping). */
export interface AdamParams {
  learningRate?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
  gradClipNorm?: number;
}

/** SamplingParams: `stop` as strings or token ids (undefined = EOS, [] = none). */
export interface SamplingParams {
  maxTokens?: number;
  temperature?: number;
  topK?: number;
  topP?: number;
  seed?: number;
  stop?: string | string[] | number[];
}

export type SampleResponse = DecodedSampleResponse;

/** An error the server reported for a request (its message and category). */
export class TinkerRequestError extends Error {
  constructor(
    message: string,
    readonly category: string,
  ) {
    super(message);
  }
}

/** The HTTP side shared by the three clients. */
class Connection {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  async call(method: "GET" | "POST", path: string, body?: unknown): Promise<Record<string, unknown>> {
    const res = await fetch(this.baseUrl.replace(/\/$/, "") + path, {
      method,
      headers: { "content-type": "application/json", "x-api-key": this.apiKey },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new TinkerRequestError(`${path}: ${String(json["error"] ?? res.statusText)} (HTTP ${res.status})`, String(json["category"] ?? "unknown"));
    return json;
  }

  async postProto(path: string, body: Uint8Array): Promise<Record<string, unknown>> {
    const res = await fetch(this.baseUrl.replace(/\/$/, "") + path, { method: "POST", headers: { "content-type": "application/x-protobuf", "x-api-key": this.apiKey }, body: Buffer.from(body) });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new TinkerRequestError(`${path}: ${String(json["error"] ?? res.statusText)} (HTTP ${res.status})`, String(json["category"] ?? "unknown"));
    return json;
  }

  /** Poll `retrieve_future` until the request settles; protobuf results when `proto`. */
  async result(requestId: unknown, proto = false): Promise<Record<string, unknown> | Uint8Array> {
    for (;;) {
      const res = await fetch(this.baseUrl.replace(/\/$/, "") + "/api/v1/retrieve_future", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": this.apiKey, ...(proto ? { accept: "application/x-protobuf" } : {}) },
        body: JSON.stringify({ request_id: requestId, allow_metadata_only: false }),
      });
      if ((res.headers.get("content-type") ?? "").includes("application/x-protobuf")) return new Uint8Array(await res.arrayBuffer());
      const json = (await res.json()) as Record<string, unknown>;
      if (res.status === 408 || json["type"] === "try_again") continue;
      if (!res.ok || "error" in json) throw new TinkerRequestError(`request ${String(requestId)}: ${String(json["error"] ?? res.statusText)}`, String(json["category"] ?? "unknown"));
      return json;
    }
  }
}

/** Entry point: a session on a Tinker server. */
export class ServiceClient {
  private readonly conn: Connection;
  private session: Promise<string> | null = null;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private modelSeq = 0;
  private samplerSeq = 0;

  /**
   * @param o.baseUrl the server, e.g. "http://127.0.0.1:8000" (default: $TINKER_BASE_URL)
   * @param o.apiKey sent as x-api-key (default: $TINKER_API_KEY, else "tml-local")
   */
  constructor(o: { baseUrl?: string; apiKey?: string } = {}) {
    const baseUrl = o.baseUrl ?? process.env["TINKER_BASE_URL"];
    if (!baseUrl) throw new Error("ServiceClient: give baseUrl or set TINKER_BASE_URL");
    this.conn = new Connection(baseUrl, o.apiKey ?? process.env["TINKER_API_KEY"] ?? "tml-local");
  }

  /** The session id (created on first use; a heartbeat keeps it alive every 10 s). */
  sessionId(): Promise<string> {
    this.session ??= this.conn.call("POST", "/api/v1/create_session", { tags: [], user_metadata: null, sdk_version: "rlvr-ts" }).then((r) => {
      const id = String(r["session_id"]);
      this.heartbeat = setInterval(() => void this.conn.call("POST", "/api/v1/session_heartbeat", { session_id: id, type: "session_heartbeat" }).catch(() => {}), 10_000);
      this.heartbeat.unref();
      return id;
    });
    return this.session;
  }

  /** The models the server can load. */
  async getServerCapabilities(): Promise<{ modelName: string }[]> {
    const r = await this.conn.call("GET", "/api/v1/get_server_capabilities");
    return (r["supported_models"] as { model_name: string }[]).map((m) => ({ modelName: m.model_name }));
  }

  /** A training client on `baseModel` with a LoRA config. */
  async createLoraTrainingClient(o: { baseModel: string; rank?: number; seed?: number; trainMlp?: boolean; trainAttn?: boolean; trainUnembed?: boolean }): Promise<TrainingClient> {
    const sid = await this.sessionId();
    const lora = { rank: o.rank ?? 32, seed: o.seed ?? null, train_mlp: o.trainMlp ?? true, train_attn: o.trainAttn ?? true, train_unembed: o.trainUnembed ?? true };
    const f = await this.conn.call("POST", "/api/v1/create_model", { session_id: sid, model_seq_id: this.modelSeq++, base_model: o.baseModel, lora_config: lora, type: "create_model" });
    const r = (await this.conn.result(f["request_id"])) as Record<string, unknown>;
    return new TrainingClient(this.conn, String(r["model_id"]), o.baseModel, this);
  }

  /** A training client loaded from a `save_state` path (weights, and the optimizer state when `optimizer`). */
  async createTrainingClientFromState(path: string, o: { optimizer?: boolean } = {}): Promise<TrainingClient> {
    const sid = await this.sessionId();
    const f = await this.conn.call("POST", "/api/v1/load_weights", { session_id: sid, model_seq_id: this.modelSeq++, path, optimizer: o.optimizer ?? false, type: "load_weights" });
    const r = (await this.conn.result(f["request_id"])) as Record<string, unknown>;
    return new TrainingClient(this.conn, String(r["model_id"]), path, this);
  }

  /** A sampling client on saved weights (`modelPath`) or a base model. */
  async createSamplingClient(o: { modelPath?: string; baseModel?: string }): Promise<SamplingClient> {
    const sid = await this.sessionId();
    const r = await this.conn.call("POST", "/api/v1/create_sampling_session", { session_id: sid, sampling_session_seq_id: this.samplerSeq++, model_path: o.modelPath, base_model: o.baseModel, type: "create_sampling_session" });
    return new SamplingClient(this.conn, String(r["sampling_session_id"]));
  }

  /** @internal the next sampling_session_seq_id of this session. */
  nextSamplerSeq(): number {
    return this.samplerSeq++;
  }

  /** Finish the session (its training models are released by rlvr's server) and stop the heartbeat. */
  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.session) await this.conn.call("POST", `/api/v1/sessions/${await this.session}/finish`, { reason: { type: "ok" } });
    this.session = null;
  }
}

/** A model being trained. Requests are sent in call order with increasing seq_id. */
export class TrainingClient {
  private seq = 0;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly conn: Connection,
    readonly modelId: string,
    readonly baseModel: string,
    private readonly service: ServiceClient,
  ) {}

  /** Send one request in order (the next seq_id) and wait for its result. */
  private submit<T>(send: (seqId: number) => Promise<Record<string, unknown>>, read: (f: Record<string, unknown>) => Promise<T>): Promise<T> {
    const sent = this.tail.then(() => send(++this.seq));
    this.tail = sent.catch(() => undefined);
    return sent.then(read);
  }

  private fwd(data: Datum[], lossFn: string, config: Record<string, number> | undefined, forwardOnly: boolean): Promise<ForwardBackwardOutput> {
    return this.submit(
      (seqId) =>
        this.conn.postProto(
          "/api/v1/forward_backward",
          encodeForwardBackwardRequest({
            modelId: this.modelId,
            seqId,
            lossFn,
            lossFnConfig: config ?? {},
            forwardOnly,
            data: data.map((d) => ({
              tokens: d.modelInput,
              lossFnInputs: Object.fromEntries(Object.entries(d.lossFnInputs).map(([k, v]) => [k, { dtype: k === "target_tokens" ? ("int64" as const) : ("float32" as const), values: Float64Array.from(v), shape: [v.length] }])),
            })),
          }),
        ),
      async (f) => {
        const out = decodeForwardBackwardOutput((await this.conn.result(f["request_id"], true)) as Uint8Array);
        return { lossFnOutputs: out.outputs, metrics: out.metrics };
      },
    );
  }

  /** Log-probs of each datum's targets and the loss value; no gradient. */
  forward(data: Datum[], lossFn: string, lossFnConfig?: Record<string, number>): Promise<ForwardBackwardOutput> {
    return this.fwd(data, lossFn, lossFnConfig, true);
  }

  /** Loss and gradient; gradients accumulate on the server until optimStep. */
  forwardBackward(data: Datum[], lossFn: string, lossFnConfig?: Record<string, number>): Promise<ForwardBackwardOutput> {
    return this.fwd(data, lossFn, lossFnConfig, false);
  }

  /** One AdamW step on the accumulated gradients. */
  optimStep(p: AdamParams = {}): Promise<{ metrics: Record<string, number> }> {
    const adam_params = { learning_rate: p.learningRate ?? 1e-4, beta1: p.beta1 ?? 0.9, beta2: p.beta2 ?? 0.95, eps: p.eps ?? 1e-12, weight_decay: p.weightDecay ?? 0, grad_clip_norm: p.gradClipNorm ?? 0 };
    return this.submit(
      (seqId) => this.conn.call("POST", "/api/v1/optim_step", { adam_params, model_id: this.modelId, seq_id: seqId, type: "optim_step" }),
      async (f) => ({ metrics: ((await this.conn.result(f["request_id"])) as Record<string, unknown>)["metrics"] as Record<string, number> }),
    );
  }

  /** Save weights and optimizer state; returns the tinker:// path. */
  saveState(name: string): Promise<string> {
    return this.submit(
      (seqId) => this.conn.call("POST", "/api/v1/save_weights", { model_id: this.modelId, path: name, seq_id: seqId, type: "save_weights" }),
      async (f) => String(((await this.conn.result(f["request_id"])) as Record<string, unknown>)["path"]),
    );
  }

  /** Load weights (and the optimizer state when `optimizer`) from a save_state path. */
  loadState(path: string, o: { optimizer?: boolean } = {}): Promise<void> {
    return this.submit(
      (seqId) => this.conn.call("POST", "/api/v1/load_weights", { model_id: this.modelId, path, seq_id: seqId, optimizer: o.optimizer ?? false, type: "load_weights" }),
      async (f) => void (await this.conn.result(f["request_id"])),
    );
  }

  /** Save weights for sampling under `name`; returns the tinker:// path. */
  saveWeightsForSampler(name: string): Promise<string> {
    return this.submit(
      (seqId) => this.conn.call("POST", "/api/v1/save_weights_for_sampler", { model_id: this.modelId, path: name, seq_id: seqId, type: "save_weights_for_sampler" }),
      async (f) => String(((await this.conn.result(f["request_id"])) as Record<string, unknown>)["path"]),
    );
  }

  /** Snapshot the current weights and return a sampling client on them. */
  saveWeightsAndGetSamplingClient(): Promise<SamplingClient> {
    return this.submit(
      (seqId) => this.conn.call("POST", "/api/v1/save_weights_for_sampler", { model_id: this.modelId, seq_id: seqId, sampling_session_seq_id: this.service.nextSamplerSeq(), kind: "snapshot", type: "save_weights_for_sampler" }),
      async (f) => new SamplingClient(this.conn, String(((await this.conn.result(f["request_id"])) as Record<string, unknown>)["sampling_session_id"])),
    );
  }
}

/** Samples from a fixed set of weights. */
export class SamplingClient {
  private seq = 0;

  constructor(
    private readonly conn: Connection,
    readonly samplingSessionId: string,
  ) {}

  /**
   * `numSamples` continuations of `prompt` (token ids), with their per-token log-probs; the
   * prompt's log-probs with `includePromptLogprobs`, and with `topkPromptLogprobs: k` the k most
   * likely tokens at each prompt position (`topkPromptLogprobs` of the response).
   */
  async sample(prompt: number[], numSamples: number, p: SamplingParams = {}, o: { includePromptLogprobs?: boolean; topkPromptLogprobs?: number } = {}): Promise<SampleResponse> {
    const sampling_params = { max_tokens: p.maxTokens ?? null, temperature: p.temperature ?? 1, top_k: p.topK ?? -1, top_p: p.topP ?? 1, seed: p.seed ?? null, stop: p.stop ?? null };
    const f = await this.conn.call("POST", "/api/v1/asample", {
      num_samples: numSamples,
      prompt: { chunks: [{ type: "encoded_text", tokens: prompt }] },
      sampling_params,
      sampling_session_id: this.samplingSessionId,
      seq_id: this.seq++,
      prompt_logprobs: o.includePromptLogprobs ?? false,
      topk_prompt_logprobs: o.topkPromptLogprobs ?? 0,
      type: "sample",
    });
    const r = await this.conn.result(f["request_id"], true);
    return r instanceof Uint8Array ? decodeSampleResponse(r) : (r as unknown as SampleResponse);
  }

  /** Log-prob of each prompt token given the ones before it (null at position 0). */
  async computeLogprobs(prompt: number[]): Promise<(number | null)[]> {
    const r = await this.sample(prompt, 1, { maxTokens: 1 }, { includePromptLogprobs: true });
    if (!r.promptLogprobs) throw new TinkerRequestError("compute_logprobs: the server returned no prompt log-probs", "server");
    return r.promptLogprobs;
  }
}
