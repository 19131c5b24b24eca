/**
 * The torch engine: any Hugging Face causal LM, held by a PyTorch + transformers worker process
 * (python/rlvr_worker), driven through the engine contract in ../engine.ts. TypeScript tokenizes
 * (src/tokenizers, shared with the embedded engine) and owns every formula; the worker samples,
 * scores, back-propagates the cotangents a TypeScript loss returns, and steps AdamW.
 *
 * forwardBackward runs in two phases over one retained graph: `forward` returns log-probs (and
 * entropy) with the graph kept in the worker, the TypeScript loss computes dL/dlp (and dL/dH), and
 * `backward` back-propagates them. When a batch exceeds the token budget the worker scores it
 * without a graph and recomputes each micro-batch with one during `backward` (same gradient, less
 * memory). Checkpoints use the Hugging Face layout (save_pretrained) plus, when asked,
 * `optimizer.safetensors` in the embedded engine's layout, so either engine resumes the other's.
 *
 * Under LoRA one worker can hold several adapters on its one base (`shareBase`: multi-tenant LoRA,
 * as `rlvr tinker` uses it): each engine on the worker is a named peft adapter with its own
 * gradients, AdamW state and reference, or the base alone with adapters disabled.
 */
import { packSampleRequest, unpackSampleReply } from "./sample-wire.ts";
import type {
  CheckpointRef,
  Engine,
  EngineInfo,
  LossReport,
  OptimStep,
  SampleRequest,
  SampleResult,
  TokenBatch,
  TokenLossFn,
  TokenScores,
  ForwardBackwardOptions,
} from "../../core/engine.ts";
import { firstTrainedPosition } from "../../core/engine.ts";
import type { Tokenizer } from "../../tokenizers/types.ts";
import { toHfConfig, type ModelConfig } from "../embedded/hf-config.ts";
import { probeTorch, WorkerProcess, INSTALL_HINT, type Deadline } from "./worker.ts";
import { workerLaunch, type DistributedOptions } from "./launch.ts";
import { checkSameAdapter, readAdapterInfo, type LoraConfig } from "../lora.ts";
import type { Header, WireTensors } from "./protocol.ts";
import { resolve } from "node:path";

export interface TorchEngineOptions {
  /** Python executable with torch + transformers (default: $RLVR_PYTHON, python/.venv, python3). */
  python?: string;
  /** "auto" (cuda when available, else cpu), "cpu", "cuda", "cuda:1", "mps". */
  device?: string;
  /** "auto" (bfloat16 autocast on CUDA with bf16 support, else float32), "float32" or "bfloat16". */
  dtype?: "auto" | "float32" | "bfloat16";
  /** Recompute activations in the backward pass (less memory, ~30% more compute). */
  gradientCheckpointing?: boolean;
  /** Most tokens (rows × padded length) in one forward; larger batches are micro-batched. Default 16384. */
  tokenBudget?: number;
  /** Run the prompt a group of consecutive rows shares once when training and scoring (exact; python/rlvr_worker/scoring.py). Default true. */
  sharedPrompts?: boolean;
  /** KV cache used by generate(): "auto" (static on CUDA in float32; dynamic on CPU and under bfloat16 autocast), "static" or "dynamic". */
  kvCache?: "auto" | "static" | "dynamic";
  /** transformers attention implementation ("sdpa" default, "eager", "flash_attention_2"). */
  attnImplementation?: string;
  /**
   * Train LoRA adapters instead of all weights through peft (needs peft in the worker's Python;
   * `rlvr setup torch --lora`). Targets are checked against the model's linear modules at load.
   * `save` then writes the adapter in peft's layout (and `merged/` with saveMerged). See ../lora.ts.
   */
  lora?: LoraConfig;
  /** Seed of the worker's torch RNG (random init). */
  seed?: number;
  /** torch CPU threads (0 = torch's default). */
  threads?: number;
  /** Tokenizer whose files `save` writes beside the weights. */
  tokenizer?: Tokenizer;
  /** Model id shown in info() (default: the directory). */
  modelId?: string;
  /** Receives the worker's stderr lines (default: forwarded to process.stderr). */
  onStderr?: (line: string) => void;
  /**
   * Data-parallel training: start the worker under torchrun with this many ranks (FSDP2 or DDP).
   * Rows of every batch are spread over the ranks; the update equals the one-process update for
   * the same batch. See docs/scaling.md.
   */
  distributed?: DistributedOptions;
  /**
   * Deadlines of the worker's calls, seconds: `load` for start-up, loading and saving (hello, load,
   * load_weights, save, set_reference, vllm_init: a first call may load or compile a model; default
   * 3600), `call` for every other call (forward, backward, score, sample, optim_step, …; default
   * 1800). Past a deadline the worker is killed and the call fails with a PeerError naming it
   * (model.loadTimeoutS, model.callTimeoutS).
   */
  timeouts?: { load?: number; call?: number };
}

/** Worker calls that may load, compile or write a whole model (the longer deadline). */
const LOAD_OPS = new Set(["hello", "load", "load_weights", "save", "set_reference", "vllm_init"]);

/** The deadline of each worker call under `t` (TorchEngineOptions.timeouts). */
export function workerDeadlines(t: TorchEngineOptions["timeouts"] = {}): (op: string) => Deadline {
  return (op) => (LOAD_OPS.has(op) ? { seconds: t.load ?? 3600, field: "model.loadTimeoutS" } : { seconds: t.call ?? 1800, field: "model.callTimeoutS" });
}

/** Versions the worker reports at start. */
export interface WorkerVersions {
  protocol: number;
  python: string;
  torch: string;
  transformers: string;
  cuda: boolean;
  peft: boolean;
  /** Ranks in the worker group (1 without model.distributed). */
  worldSize: number;
  /** Process-group backend under torchrun ("gloo" | "nccl"), null in one process. */
  backend: string | null;
}

/**
 * What the engines on one worker share (TorchEngine.shareBase): the process; the lock that runs
 * each engine's call sequences (a forward and its backward) whole, so no other tenant's call falls
 * between them; and how many engines are open on it (the last one's close ends the worker).
 */
interface SharedWorker {
  worker: WorkerProcess;
  lock: Promise<unknown>;
  open: number;
}

/** Options of an engine that shares a TorchEngine's base (TorchEngine.shareBase). */
export interface TorchShareOptions {
  /** Its own LoRA adapter (rank, alpha, dropout, targets; initialised from `seed`); without it the base model alone, for sampling and scoring (a KL reference). */
  lora?: LoraConfig;
  /** Seed of the adapter's initialisation (A; B starts at 0). Default 0. */
  seed?: number;
  /** Tokenizer whose files `save` writes beside the adapter (default: the sharing engine's). */
  tokenizer?: Tokenizer;
  /** Model id shown in info() (default: the sharing engine's). */
  modelId?: string;
}

export class TorchEngine implements Engine {
  private closed = false;

  private constructor(
    private readonly shared: SharedWorker,
    private readonly infoCache: EngineInfo,
    readonly versions: WorkerVersions,
    private readonly opts: TorchEngineOptions,
    /** The worker's name for this engine's state (shareBase); null: the engine that loaded the model. */
    private readonly tenant: string | null = null,
    /** The base checkpoint directory, when the base is frozen (LoRA) and came from a directory. */
    private readonly baseDir: string | null = null,
  ) {}

  private get worker(): WorkerProcess {
    return this.shared.worker;
  }

  /** One worker call as this engine's tenant (the request names it; the loading engine's carry no name). */
  private call(op: string, header: Header = {}, tensors: WireTensors = {}, deadline?: Deadline): Promise<{ header: Header; tensors: WireTensors }> {
    if (this.closed) return Promise.reject(new Error(`torch engine: ${op} on an engine that was closed`));
    return this.worker.call(op, this.tenant === null ? header : { ...header, tenant: this.tenant }, tensors, {}, deadline);
  }

  /**
   * Whether the torch engine can run here (Python imports torch and transformers).
   * @returns ok, or a reason that names the install command.
   */
  static probe(python?: string): ReturnType<typeof probeTorch> {
    return probeTorch(python);
  }

  /**
   * Load a local Hugging Face checkpoint directory (config.json + *.safetensors), or a peft LoRA
   * adapter directory (adapter_config.json): its base with the adapter attached and trainable
   * (`opts.lora`, when given, must have the adapter's rank, alpha and targets).
   */
  static async fromPretrained(dir: string, opts: TorchEngineOptions = {}): Promise<TorchEngine> {
    const adapter = readAdapterInfo(dir);
    if (adapter && opts.lora) checkSameAdapter(dir, adapter.lora, opts.lora);
    return TorchEngine.start({ path: dir }, { modelId: dir, ...opts, ...(adapter ? { lora: { ...adapter.lora, saveMerged: opts.lora?.saveMerged ?? false } } : {}) }, resolve(adapter?.base ?? dir));
  }

  /** A randomly initialised model of `config` (transformers' initialisation, seeded by opts.seed). */
  static async create(config: ModelConfig, opts: TorchEngineOptions = {}): Promise<TorchEngine> {
    return TorchEngine.start({ config: toHfConfig(config) }, { modelId: `random-init(${config.hiddenSize}x${config.numLayers})`, ...opts });
  }

  private static async start(what: { path?: string; config?: Record<string, unknown> }, opts: TorchEngineOptions, dir: string | null = null): Promise<TorchEngine> {
    if (opts.distributed && opts.lora) throw new Error("config error at model.distributed: LoRA under torchrun is not supported yet; train LoRA in one process (drop model.distributed)");
    const launch = workerLaunch(opts.distributed);
    const worker = new WorkerProcess({ python: opts.python, onStderr: opts.onStderr, deadline: workerDeadlines(opts.timeouts), ...launch });
    try {
      const hello = (await worker.call("hello")).header as unknown as WorkerVersions;
      if (hello.protocol !== 1) throw new Error(`torch worker speaks protocol ${hello.protocol}, this client speaks 1: reinstall with \`rlvr setup torch\``);
      const options = {
        device: opts.device ?? "auto",
        dtype: opts.dtype ?? "auto",
        gradientCheckpointing: opts.gradientCheckpointing ?? false,
        tokenBudget: opts.tokenBudget ?? 16384,
        sharedPrompts: opts.sharedPrompts ?? true,
        kvCache: opts.kvCache ?? "auto",
        attnImplementation: opts.attnImplementation ?? "sdpa",
        seed: opts.seed ?? 0,
        threads: opts.threads ?? 0,
        ...(opts.lora ? { lora: opts.lora } : {}),
        ...(opts.distributed ? { strategy: opts.distributed.strategy ?? "fsdp2" } : {}),
      };
      if (opts.lora && !hello.peft) throw new Error(`LoRA needs peft in the worker's Python (${worker.python}): pip install peft`);
      const reply = await worker.call("load", { ...what, options });
      const i = reply.header.info as Record<string, unknown>;
      const info: EngineInfo = {
        engine: "torch",
        modelId: opts.modelId ?? String(i.modelId),
        vocabSize: Number(i.vocabSize),
        maxSeqLen: Number(i.maxSeqLen),
        numParams: Number(i.numParams),
        device: String(i.device),
        dtype: String(i.dtype),
      };
      return new TorchEngine({ worker, lock: Promise.resolve(), open: 1 }, info, hello, opts, null, opts.lora && !opts.distributed ? dir : null);
    } catch (e) {
      await worker.close(2000).catch(() => undefined);
      const msg = (e as Error).message;
      if (/No module named|could not start/.test(msg) && !msg.includes(INSTALL_HINT)) throw new Error(`${msg}\n${INSTALL_HINT}`);
      throw e;
    }
  }

  /** Run `fn` with exclusive use of the worker, among every engine sharing it (keeps forward/backward pairs together). */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.shared.lock.then(fn, fn);
    this.shared.lock = p.catch(() => undefined);
    return p;
  }

  /**
   * A second engine on this engine's frozen base, in the same worker process, without copying the
   * base (multi-tenant LoRA, as EmbeddedEngine.shareBase): with `opts.lora` its own peft adapter
   * (named in the worker; A initialised from `opts.seed`), gradients, AdamW state and reference;
   * without, the base model alone with every adapter disabled, for sampling and scoring (a KL
   * reference; it does not train). Requests name the engine's adapter and the worker activates it,
   * so engines never see each other's state; calls of all engines on the worker run one at a time.
   * `load(dir)` on the new engine reads a saved adapter (and its AdamW state) into its adapter.
   * Closing an engine releases its adapter and optimizer; closing the last closes the worker.
   * @throws Error when this engine trains every weight (no frozen base) or runs under torchrun; the worker's error on bad LoRA targets
   */
  async shareBase(opts: TorchShareOptions = {}): Promise<TorchEngine> {
    if (!this.frozenBase) throw new Error("shareBase: this engine trains every weight, so it has no frozen base to share (open it with model.lora, in one process)");
    const { header } = await this.exclusive(() => this.call("add_tenant", { lora: opts.lora ?? null, seed: opts.seed ?? 0 }));
    this.shared.open += 1;
    const i = header.info as Record<string, unknown>;
    const info = { ...this.infoCache, numParams: Number(i.numParams), modelId: opts.modelId ?? this.infoCache.modelId };
    const o: TorchEngineOptions = { ...this.opts, lora: opts.lora, tokenizer: opts.tokenizer ?? this.opts.tokenizer, seed: opts.seed ?? 0 };
    return new TorchEngine(this.shared, info, this.versions, o, String(header.tenant), this.baseDir);
  }

  /** Whether the base is never trained here (LoRA in one process, or an engine from shareBase), so shareBase may share it. */
  private get frozenBase(): boolean {
    return this.tenant !== null || (!!this.opts.lora && !this.opts.distributed);
  }

  /** The directory of the frozen base this engine can share (shareBase), or null: it trains every weight, or its base is a random init. */
  get sharedBaseDir(): string | null {
    return this.baseDir;
  }

  /** Engines open on this engine's worker (1 unless shareBase made more). */
  get workerTenants(): number {
    return this.shared.open;
  }

  info(): EngineInfo {
    return { ...this.infoCache };
  }

  /** Whether the worker process is running. */
  get alive(): boolean {
    return this.worker.alive;
  }

  async sample(req: SampleRequest): Promise<SampleResult[]> {
    if (!(req.n >= 1)) throw new Error(`sample: n must be >= 1, got ${req.n}`);
    const { header, tensors: wire } = packSampleRequest(req);
    const { tensors } = await this.exclusive(() => this.call("sample", header, wire));
    return unpackSampleReply(tensors, req);
  }

  private batchTensors(batch: TokenBatch) {
    const { batchSize: B, seqLen: T } = batch;
    if (batch.tokens.length !== B * T) throw new Error(`TokenBatch.tokens has ${batch.tokens.length} entries, expected batchSize*seqLen = ${B * T}`);
    if (batch.lengths.length !== B) throw new Error(`TokenBatch.lengths has ${batch.lengths.length} entries, expected batchSize = ${B}`);
    return { header: { batchSize: B, seqLen: T }, tensors: { tokens: batch.tokens, lengths: batch.lengths } };
  }

  async score(batch: TokenBatch, opts: { model: "policy" | "reference"; entropy?: boolean }): Promise<TokenScores> {
    const b = this.batchTensors(batch);
    const { tensors } = await this.exclusive(() => this.call("score", { ...b.header, model: opts.model, entropy: !!opts.entropy }, b.tensors));
    return { logprobs: tensors.logprobs as Float32Array, entropy: opts.entropy ? (tensors.entropy as Float32Array) : undefined };
  }

  async forwardBackward(batch: TokenBatch, loss: TokenLossFn, opts: ForwardBackwardOptions = {}): Promise<LossReport> {
    const b = this.batchTensors(batch);
    const n = batch.batchSize * batch.seqLen;
    const scoreFrom = opts.trainedOnly ? firstTrainedPosition(batch) : 0;
    return this.exclusive(async () => {
      const fwd = await this.call("forward", { ...b.header, entropy: !!opts.entropy, scoreFrom }, b.tensors);
      const scores: TokenScores = { logprobs: fwd.tensors.logprobs as Float32Array };
      if (opts.entropy) scores.entropy = fwd.tensors.entropy as Float32Array;
      let out;
      try {
        out = loss(scores, batch);
        if (out.dLogprobs.length !== n) throw new Error(`loss returned dLogprobs of length ${out.dLogprobs.length}, expected batchSize*seqLen = ${n}`);
        if (out.dEntropy && out.dEntropy.length !== n) throw new Error(`loss returned dEntropy of length ${out.dEntropy.length}, expected ${n}`);
        if (out.dEntropy && !opts.entropy) throw new Error("loss returned dEntropy but forwardBackward was called without { entropy: true }");
      } catch (e) {
        await this.call("backward", {}); // drop the retained graph
        throw e;
      }
      if (!Number.isFinite(out.loss)) {
        await this.call("backward", {});
        return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
      }
      const grads: Record<string, Float32Array> = { dLogprobs: out.dLogprobs };
      if (out.dEntropy) grads.dEntropy = out.dEntropy;
      await this.call("backward", b.header, grads);
      return { loss: out.loss, metrics: out.metrics, tokens: countTokens(batch) };
    });
  }

  async optimStep(opt: OptimStep): Promise<{ gradNorm: number; skipped: boolean }> {
    const { header } = await this.exclusive(() =>
      this.call("optim_step", {
        lr: opt.lr,
        maxGradNorm: opt.maxGradNorm ?? 0,
        weightDecay: opt.weightDecay ?? 0,
        beta1: opt.beta1 ?? 0.9,
        beta2: opt.beta2 ?? 0.999,
        eps: opt.eps ?? 1e-8,
      }),
    );
    return { gradNorm: Number(header.gradNorm), skipped: Boolean(header.skipped) };
  }

  /** Drop accumulated gradients without stepping. */
  async zeroGrad(): Promise<void> {
    await this.exclusive(() => this.call("zero_grad"));
  }

  async setReference(from: "policy" | CheckpointRef): Promise<void> {
    await this.exclusive(() => this.call("set_reference", from === "policy" ? {} : { path: from.dir }));
  }

  /** The checkpoint in `dir` (under LoRA: the adapter, plus `base/` for a random-init base and `merged/` with saveMerged), each with the tokenizer's files. */
  async save(dir: string, opts: { optimizer?: boolean } = {}): Promise<void> {
    const { header } = await this.exclusive(() => this.call("save", { path: dir, optimizer: !!opts.optimizer }));
    const tok = this.opts.tokenizer;
    if (tok) for (const d of [dir, ...((header.modelDirs as string[] | undefined) ?? [])]) await tok.save(d);
  }

  async load(dir: string): Promise<void> {
    await this.exclusive(() => this.call("load_weights", { path: dir }));
  }

  /** Release this engine: with other engines on the worker (shareBase) its adapter and optimizer; the last one closes the worker. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.shared.open -= 1;
    if (this.shared.open === 0) await this.worker.close(this.opts.distributed ? 30_000 : 10_000);
    else if (this.worker.alive) await this.exclusive(() => this.worker.call("drop_tenant", { name: this.tenant ?? "default" }));
  }

  // ---------------------------------------------------------------- inspection (tests, tools)

  /** A copy of parameter `name` (Hugging Face name and [out, in] layout), float32. */
  async getWeight(name: string): Promise<Float32Array> {
    const r = await this.exclusive(() => this.call("get_tensor", { name }));
    return r.tensors.data as Float32Array;
  }

  /** Overwrite parameter `name` (HF layout). */
  async setWeight(name: string, data: Float32Array): Promise<void> {
    await this.exclusive(() => this.call("set_tensor", { name }, { data }));
  }

  /** The accumulated gradient of `name`, or null before any backward. */
  async getGrad(name: string): Promise<Float32Array | null> {
    const r = await this.exclusive(() => this.call("get_tensor", { name, grad: true }));
    return r.header.present ? (r.tensors.data as Float32Array) : null;
  }

  /** Peak and current CUDA memory in bytes (0 on CPU); `reset` restarts the peak counter. */
  async memory(reset = false): Promise<{ peakBytes: number; allocatedBytes: number }> {
    const r = await this.exclusive(() => this.call("memory", { reset }));
    return { peakBytes: Number(r.header.peakBytes), allocatedBytes: Number(r.header.allocatedBytes) };
  }

  /** The worker's process id (under torchrun: the torchrun agent's, which leads the ranks' process group). */
  get workerPid(): number | undefined {
    return this.worker.pid;
  }

  /** Kill the worker process (tests: crash handling). */
  killWorker(): void {
    this.worker.kill();
  }

  /**
   * Run a command an extension module added to the worker (e.g. vllm_sample, python/rlvr_worker/vllm_colocated.py), in turn with the engine's calls.
   * @param deadline this call's deadline (default: the engine's, by op)
   */
  async extensionCall(op: string, header: Record<string, unknown> = {}, tensors: Record<string, Int32Array | Float32Array> = {}, deadline?: Deadline): Promise<{ header: Record<string, unknown>; tensors: Record<string, unknown> }> {
    return this.exclusive(() => this.call(op, header, tensors, deadline));
  }
}

function countTokens(batch: TokenBatch): number {
  let n = 0;
  for (let i = 0; i < batch.lossMask.length; i++) n += batch.lossMask[i]!;
  return n;
}
