/**
 * How a sample request and its reply travel over the torch worker's framed protocol, shared by
 * the worker's own `sample` (Hugging Face generate) and vLLM's colocated `vllm_sample`:
 * prompts flattened into one int32 tensor with their lengths; the reply holds [R×S] tokens and
 * log-probs (S = maxNewTokens, R = prompts × n, prompt-major), each row's length and whether a
 * stop token ended it.
 */
import type { SampleRequest, SampleResult } from "../../core/engine.ts";

/** The request's header fields and tensors. */
export function packSampleRequest(req: SampleRequest): { header: Record<string, unknown>; tensors: { prompts: Int32Array; promptLengths: Int32Array } } {
  const lens = Int32Array.from(req.prompts.map((p) => p.length));
  const flat = new Int32Array(lens.reduce((a, b) => a + b, 0));
  let off = 0;
  for (const p of req.prompts) {
    flat.set(p, off);
    off += p.length;
  }
  const header = { n: req.n, maxNewTokens: req.maxNewTokens, temperature: req.temperature, topP: req.topP ?? 1, topK: req.topK ?? 0, stopTokens: req.stopTokens ?? [], seed: req.seed };
  return { header, tensors: { prompts: flat, promptLengths: lens } };
}

/** The reply's tensors as SampleResults, prompt-major. */
export function unpackSampleReply(tensors: Record<string, unknown>, req: SampleRequest): SampleResult[] {
  const tokens = tensors["tokens"] as Int32Array;
  const logprobs = tensors["logprobs"] as Float32Array;
  const lengths = tensors["lengths"] as Int32Array;
  const stop = tensors["stop"] as Int32Array;
  const S = req.maxNewTokens;
  const out: SampleResult[] = [];
  for (let r = 0; r < req.prompts.length * req.n; r++) {
    const L = lengths[r]!;
    out.push({ promptIndex: Math.floor(r / req.n), tokens: tokens.slice(r * S, r * S + L), logprobs: logprobs.slice(r * S, r * S + L), stopReason: stop[r] ? "completed" : "max_tokens" });
  }
  return out;
}
