/**
 * `asample` of the Tinker protocol on an engine: SamplingParams (max_tokens, temperature, top_k,
 * top_p, seed, stop as token ids or strings), per-token log-probs of the sampled tokens, the
 * prompt's log-probs (`prompt_logprobs`, which `compute_logprobs` uses) and, on the embedded
 * engine, the top-k prompt log-probs (`topk_prompt_logprobs`; both honour `prompt_logprobs_last_n`). Stop strings are matched
 * on the decoded text after sampling: a sample is cut after the token that completes the first
 * stop string (the same tokens a stopping sampler would return).
 */
import type { Engine } from "../core/engine.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { UserError } from "./futures.ts";
import { TOPK_MASK_LOGPROB, type ProtoSampledSequence, type ProtoTopk } from "./proto.ts";
import { EmbeddedEngine } from "../engines/embedded/engine.ts";

/** The JSON body of `asample` (the fields rlvr reads). */
export interface TinkerSampleRequest {
  num_samples?: number;
  prompt?: { chunks?: { type?: string; tokens?: number[] }[] };
  sampling_params?: { max_tokens?: number | null; seed?: number | null; stop?: string | string[] | number[] | null; temperature?: number; top_k?: number; top_p?: number };
  prompt_logprobs?: boolean | null;
  prompt_logprobs_last_n?: number | null;
  topk_prompt_logprobs?: number;
  topk_sample_logprobs?: number;
  target_prompt_logprobs?: unknown;
  prompt_alt_tokens_k?: number;
}

/** Prompt token ids of a ModelInput. @throws UserError on non-text chunks. */
export function promptTokens(req: TinkerSampleRequest, vocabSize: number): number[] {
  const chunks = req.prompt?.chunks;
  if (!Array.isArray(chunks)) throw new UserError("asample.prompt.chunks must be a list of encoded_text chunks");
  const out: number[] = [];
  chunks.forEach((c, i) => {
    if ((c.type ?? "encoded_text") !== "encoded_text" || !Array.isArray(c.tokens)) throw new UserError(`asample.prompt.chunks[${i}]: only encoded_text chunks are supported`);
    for (const t of c.tokens) {
      if (!Number.isInteger(t) || t < 0 || t >= vocabSize) throw new UserError(`asample.prompt.chunks[${i}]: token id ${t} is outside the vocabulary [0, ${vocabSize})`);
      out.push(t);
    }
  });
  if (out.length === 0) throw new UserError("asample.prompt is empty");
  return out;
}

/**
 * Sample for one request.
 * @param seed the request's seed (SamplingParams.seed, else one the server picked).
 * @throws UserError for options the engine contract cannot serve (top-k log-probs, target or
 *         alternative prompt tokens) and bad values.
 */
export async function sampleTinker(engine: Engine, tok: Tokenizer, req: TinkerSampleRequest, seed: number): Promise<{ sequences: ProtoSampledSequence[]; promptLogprobs?: Float32Array; topkPromptLogprobs?: ProtoTopk }> {
  if (req.topk_sample_logprobs) throw new UserError("asample: topk_sample_logprobs (top-k log-probs of sampled tokens) is not supported by rlvr's Tinker server; topk_prompt_logprobs is");
  const k = req.topk_prompt_logprobs ?? 0;
  if (!Number.isInteger(k) || k < 0) throw new UserError(`asample.topk_prompt_logprobs must be an integer >= 0, got ${JSON.stringify(k)}`);
  if (k > 0 && !(engine instanceof EmbeddedEngine)) throw new UserError("asample.topk_prompt_logprobs needs the embedded engine (rlvr tinker --engine embedded); the torch engine returns sampled and prompt log-probs only");
  if (req.target_prompt_logprobs || req.prompt_alt_tokens_k) throw new UserError("asample: target_prompt_logprobs and prompt_alt_tokens_k are not supported by rlvr's Tinker server");
  const info = engine.info();
  const prompt = promptTokens(req, info.vocabSize);
  const sp = req.sampling_params ?? {};
  const room = info.maxSeqLen - prompt.length;
  const maxTokens = sp.max_tokens ?? room;
  if (!Number.isInteger(maxTokens) || maxTokens < 0) throw new UserError(`asample.sampling_params.max_tokens must be an integer >= 0, got ${maxTokens}`);
  if (maxTokens > room) throw new UserError(`asample: prompt (${prompt.length} tokens) + max_tokens (${maxTokens}) exceeds the model's context of ${info.maxSeqLen}`);
  const temperature = sp.temperature ?? 1;
  if (!(temperature >= 0)) throw new UserError(`asample.sampling_params.temperature must be >= 0, got ${temperature}`);
  const { ids, strings } = stops(sp.stop, tok);
  const n = req.num_samples ?? 1;
  let sequences: ProtoSampledSequence[];
  if (maxTokens === 0) sequences = Array.from({ length: n }, () => ({ stopReason: "length" as const, tokens: [], logprobs: [] }));
  else {
    const res = await engine.sample({ prompts: [Int32Array.from(prompt)], n, maxNewTokens: maxTokens, temperature, topK: sp.top_k !== undefined && sp.top_k > 0 ? sp.top_k : 0, topP: sp.top_p ?? 1, stopTokens: ids, seed });
    sequences = res.map((r) => cutAtStopString({ stopReason: r.stopReason === "completed" ? "stop" : "length", tokens: Array.from(r.tokens), logprobs: Array.from(r.logprobs) }, strings, tok));
  }
  const T = prompt.length;
  const keep = req.prompt_logprobs_last_n ?? T - 1;
  if (req.prompt_logprobs_last_n != null && (!Number.isInteger(keep) || keep < 1 || keep > T - 1)) throw new UserError(`asample.prompt_logprobs_last_n must be between 1 and len(prompt) - 1 = ${T - 1}, got ${keep}`);
  let promptLogprobs: Float32Array | undefined;
  if (req.prompt_logprobs) {
    const scores = await engine.score({ batchSize: 1, seqLen: T, tokens: Int32Array.from(prompt), lengths: Int32Array.from([T]), lossMask: new Float32Array(T) }, { model: "policy" });
    promptLogprobs = Float32Array.from(scores.logprobs);
    for (let t = 0; t < T - keep; t++) promptLogprobs[t] = NaN;
  }
  let topkPromptLogprobs: ProtoTopk | undefined;
  if (k > 0) {
    const kk = Math.min(k, info.vocabSize);
    const top = await (engine as EmbeddedEngine).topLogprobs(Int32Array.from(prompt), kk);
    // The SDK's empty cell: token id 0, log-prob −99999 (tinker/types/topk_logprobs.py MASK_LOGPROB).
    for (let i = 0; i < T * kk; i++) if (Math.floor(i / kk) < T - keep || top.ids[i]! < 0) [top.ids[i], top.logprobs[i]] = [0, TOPK_MASK_LOGPROB];
    topkPromptLogprobs = { k: kk, length: T, ids: top.ids, logprobs: top.logprobs };
  }
  return { sequences, promptLogprobs, topkPromptLogprobs };
}


/** SamplingParams.stop → stop token ids and stop strings. None keeps EOS; [] stops on nothing. */
function stops(stop: string | string[] | number[] | null | undefined, tok: Tokenizer): { ids: number[]; strings: string[] } {
  if (stop === undefined || stop === null) return { ids: [tok.eosId], strings: [] };
  const list = typeof stop === "string" ? [stop] : stop;
  if (!Array.isArray(list)) throw new UserError("asample.sampling_params.stop must be a string, a list of strings or a list of token ids");
  if (list.every((s) => typeof s === "number")) return { ids: list as number[], strings: [] };
  if (list.every((s) => typeof s === "string" && s.length > 0)) return { ids: [], strings: list as string[] };
  throw new UserError("asample.sampling_params.stop must be all non-empty strings or all token ids");
}

function cutAtStopString(s: ProtoSampledSequence, strings: string[], tok: Tokenizer): ProtoSampledSequence {
  if (strings.length === 0) return s;
  const tokens = Array.from(s.tokens);
  for (let k = 1; k <= tokens.length; k++) {
    const text = tok.decode(tokens.slice(0, k), { skipSpecial: false });
    if (strings.some((x) => text.includes(x))) return { stopReason: "stop", tokens: tokens.slice(0, k), logprobs: Array.from(s.logprobs).slice(0, k) };
  }
  return s;
}
