/**
 * A lower bound on the memory a run config needs, checked against the machine before anything is
 * allocated: `groupSize: 1e9` or `promptsPerStep × groupSize` in the hundreds of millions used to
 * grow until V8 aborted (56 s, 4.5 GB); now the config is refused at load with the field to lower.
 *
 * The estimate counts only what the run must hold at once, with sizes the config fixes:
 * - the model (model.init): weights, gradients, two Adam moments and a reference copy, float32;
 * - one RL forward/backward pass on the embedded engine: the micro-batch's sequences × the
 *   response length (prompt lengths unknown, so left out) × what backward keeps per token (about
 *   8·hidden + 2·intermediate per layer, and the logits twice); plus the sampler's KV cache for
 *   the sequences it samples at once (up to 128);
 * - the step's rollout records (token ids, log-probs, masks, text: ≥ 512 B + 16 B per token each);
 * - generated examples (≥ 400 B each).
 * Being a lower bound, it never refuses a config that fits; it catches sizes that cannot.
 */
import { totalmem } from "node:os";
import { getHeapStatistics } from "node:v8";

/** One part of the estimate, with the config field that drives it. */
export interface MemoryTerm {
  field: string;
  bytes: number;
  /** What it is, in words, e.g. "8192 sequences × 16 tokens in one forward/backward pass". */
  what: string;
  /** Held in JavaScript objects (counts against V8's heap limit) rather than typed arrays. */
  heap: boolean;
}

/** The config fields the estimate reads (a structural subset of RunConfig). */
export interface SizedConfig {
  model: { engine?: string; init?: { hiddenSize: number; numLayers: number; numHeads: number; numKvHeads?: number; intermediateSize?: number; maxPositionEmbeddings: number; tieWordEmbeddings?: boolean } };
  tokenizer?: { type: string; alphabet?: string };
  data: { task?: string; train?: string; trainSize: number; testSize: number };
  sft?: { batchSize: number; microBatchSize?: number };
  rl?: { promptsPerStep: number; groupSize: number; maxNewTokens: number; miniBatches: number; microBatchSize?: number };
}

/** Sequences the embedded engine samples at once (its default maxSampleBatch). */
const SAMPLE_CHUNK = 128;

/** Special tokens a char tokenizer adds to its alphabet (pad, bos, eos, unk). */
const CHAR_SPECIALS = 4;

/** Bytes as "12.3 GiB". */
export function formatBytes(b: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  while (b >= 1024 && i < units.length - 1) (b /= 1024), i++;
  return `${b.toFixed(b >= 100 || i === 0 ? 0 : 1)} ${units[i]}`;
}

/** The field among `candidates` ([field, value, default]) furthest above its default. */
function driver(candidates: [string, number, number][]): string {
  return candidates.reduce((a, b) => (b[1] / b[2] > a[1] / a[2] ? b : a))[0];
}

/** The parts of the lower bound for `cfg` (see the module comment). */
export function estimateRunMemory(cfg: SizedConfig): MemoryTerm[] {
  const terms: MemoryTerm[] = [];
  const init = cfg.model.init;
  const embedded = (cfg.model.engine ?? "embedded") === "embedded";
  const V = cfg.tokenizer?.type === "char" && cfg.tokenizer.alphabet ? [...cfg.tokenizer.alphabet].length + CHAR_SPECIALS : 0;
  if (init) {
    const h = init.hiddenSize;
    const L = init.numLayers;
    const I = init.intermediateSize ?? 3 * h;
    const kvDim = (h / init.numHeads) * (init.numKvHeads ?? init.numHeads);
    const params = V * h * (init.tieWordEmbeddings === false ? 2 : 1) + L * (2 * h * h + 2 * h * kvDim + 3 * h * I + 2 * h) + h;
    terms.push({ field: driver([["model.init.hiddenSize", h, 128], ["model.init.numLayers", L, 2], ["model.init.intermediateSize", I, 384]]), bytes: params * 4 * 5, what: `a model of ${params.toExponential(2)} parameters (weights, gradients, Adam moments, reference copy)`, heap: false });
  }
  const rl = cfg.rl;
  if (rl) {
    const seqs = rl.promptsPerStep * rl.groupSize;
    const T = rl.maxNewTokens;
    const stepField = driver([["rl.promptsPerStep", rl.promptsPerStep, 16], ["rl.groupSize", rl.groupSize, 8], ["rl.maxNewTokens", T, 16]]);
    terms.push({ field: stepField, bytes: seqs * (512 + 16 * T), what: `${seqs} rollouts of up to ${T} tokens per step`, heap: true });
    if (init && embedded) {
      const h = init.hiddenSize;
      const L = init.numLayers;
      const I = init.intermediateSize ?? 3 * h;
      const micro = rl.microBatchSize ?? Math.ceil(seqs / rl.miniBatches);
      const perToken = L * (8 * h + 2 * I) + 2 * V;
      terms.push({ field: rl.microBatchSize !== undefined ? "rl.microBatchSize" : stepField, bytes: Math.min(micro, seqs) * T * perToken * 4, what: `${Math.min(micro, seqs)} sequences × ${T} tokens in one forward/backward pass`, heap: false });
      const kvDim = (h / init.numHeads) * (init.numKvHeads ?? init.numHeads);
      const sampled = Math.min(seqs, SAMPLE_CHUNK);
      terms.push({ field: stepField, bytes: sampled * T * L * 2 * kvDim * 4, what: `the sampler's KV cache for ${sampled} sequences × ${T} tokens`, heap: false });
    }
  }
  if (cfg.sft && init && embedded) {
    const h = init.hiddenSize;
    const I = init.intermediateSize ?? 3 * h;
    const micro = cfg.sft.microBatchSize ?? cfg.sft.batchSize;
    const T = Math.min(init.maxPositionEmbeddings, 8);
    terms.push({ field: cfg.sft.microBatchSize !== undefined ? "sft.microBatchSize" : "sft.batchSize", bytes: micro * T * (init.numLayers * (8 * h + 2 * I) + 2 * V) * 4, what: `${micro} SFT sequences × ≥ ${T} tokens in one forward/backward pass`, heap: false });
  }
  if (cfg.data.task !== undefined && cfg.data.train === undefined) {
    const n = cfg.data.trainSize + cfg.data.testSize;
    terms.push({ field: cfg.data.trainSize >= cfg.data.testSize ? "data.trainSize" : "data.testSize", bytes: n * 400, what: `${n} generated examples`, heap: true });
  }
  return terms;
}

/**
 * Check the estimate against the machine.
 * @param available  bytes of memory (default: os.totalmem())
 * @param heapLimit  V8's heap limit for the JavaScript-object parts (default: this process's)
 * @returns null when it fits, else `{field, message}` — the message says how much is needed, the
 *   largest part, what the machine has, and which field to lower.
 */
export function checkRunMemory(cfg: SizedConfig, available = totalmem(), heapLimit = getHeapStatistics().heap_size_limit): { field: string; message: string } | null {
  const terms = estimateRunMemory(cfg);
  const largest = (ts: MemoryTerm[]) => ts.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  const total = terms.reduce((s, t) => s + t.bytes, 0);
  if (terms.length && total > available) {
    const big = largest(terms);
    return { field: big.field, message: `these sizes need at least ${formatBytes(total)} of memory (largest part: ${big.what}, ${formatBytes(big.bytes)}), more than this machine's ${formatBytes(available)}; lower ${big.field}` };
  }
  const heapTerms = terms.filter((t) => t.heap);
  const heap = heapTerms.reduce((s, t) => s + t.bytes, 0);
  if (heapTerms.length && heap > heapLimit) {
    const big = largest(heapTerms);
    return { field: big.field, message: `these sizes need at least ${formatBytes(heap)} of JavaScript heap (largest part: ${big.what}), more than Node's limit of ${formatBytes(heapLimit)}; lower ${big.field} (or raise the limit with NODE_OPTIONS=--max-old-space-size=<MiB>)` };
  }
  return null;
}
