/** Sampling routes of the Tinker protocol: sampling sessions, samplers, asample (results in protobuf). */
import { randomUUID } from "node:crypto";
import { UserError } from "../futures.ts";
import { encodeSampleResponse, TOPK_MASK_LOGPROB, type ProtoTopk } from "../proto.ts";
import { sampleTinker, type TinkerSampleRequest } from "../sample.ts";
import type { FastifyInstance } from "fastify";
import { requestBody, type TinkerState } from "../state.ts";

export function samplingRoutes(app: FastifyInstance, st: TinkerState): void {
  app.post("/api/v1/create_sampling_session", async (req) => {
    const b = requestBody(req);
    const path = b["model_path"];
    const s = path ? await st.newSampler(String(b["base_model"] ?? path), st.pathDir(path, "create_sampling_session.model_path"), String(path)) : await st.newSampler(String(b["base_model"]), st.baseDir(b["base_model"], "create_sampling_session.base_model"), null);
    return { type: "create_sampling_session", sampling_session_id: s.id };
  });
  app.get<{ Params: { id: string } }>("/api/v1/samplers/:id", async (req) => {
    const s = st.samplerInfo(req.params.id);
    return { sampler_id: req.params.id, base_model: s.baseModel, model_path: s.modelPath };
  });
  app.post("/api/v1/asample", async (req) => {
    const b = requestBody(req) as unknown as TinkerSampleRequest & { sampling_session_id?: string; seq_id?: number; model_path?: string; base_model?: string };
    const sid = b.sampling_session_id;
    if (sid && !st.hasSampler(sid)) throw new UserError(`asample: no sampling session "${sid}"`);
    const n = b.num_samples ?? 1;
    if (!Number.isInteger(n) || n < 1) throw new UserError("asample.num_samples must be a positive integer");
    const seed = b.sampling_params?.seed ?? st.seedCounter++;
    // A retry of a sampling session's request (same seq_id) gets the first one's future and ids.
    const key = b.sampling_session_id && Number.isInteger(b.seq_id) ? `${b.sampling_session_id}/${String(b.seq_id)}/asample` : undefined;
    const ids = (key && st.sampleIds.get(key)) || Array.from({ length: n }, () => `seq-${randomUUID().slice(0, 12)}`);
    if (key) st.sampleIds.set(key, ids);
    if (st.sampleIds.size > 10_000) st.sampleIds.delete(st.sampleIds.keys().next().value!);
    const request_id = st.futures.submit(async () => {
      const s = sid ? await st.sampler(sid) : b.model_path ? await st.newSampler(String(b.base_model ?? b.model_path), st.pathDir(b.model_path, "asample.model_path"), b.model_path) : await st.newSampler(String(b.base_model), st.baseDir(b.base_model, "asample.base_model"), null);
      const r = await sampleTinker(s.engine, s.tokenizer, b, seed);
      const json = {
        type: "sample",
        sequences: r.sequences.map((q) => ({ stop_reason: q.stopReason, tokens: Array.from(q.tokens), logprobs: Array.from(q.logprobs) })),
        prompt_logprobs: r.promptLogprobs ? Array.from(r.promptLogprobs, (v) => (Number.isNaN(v) ? null : v)) : null,
        topk_prompt_logprobs: r.topkPromptLogprobs ? topkJson(r.topkPromptLogprobs) : null,
      };
      return { json, proto: encodeSampleResponse(r.sequences, r.promptLogprobs, r.topkPromptLogprobs) };
    }, key);
    return { request_id, sample_sequence_ids: ids };
  });
}

/** Top-k prompt log-probs in the SDK's list form: per position a list of [token id, log-prob], or null where empty. */
function topkJson(t: ProtoTopk): ([number, number][] | null)[] {
  return Array.from({ length: t.length }, (_, i) => {
    const row: [number, number][] = [];
    for (let j = 0; j < t.k; j++) if (t.logprobs[i * t.k + j] !== TOPK_MASK_LOGPROB) row.push([t.ids[i * t.k + j]!, t.logprobs[i * t.k + j]!]);
    return row.length ? row : null;
  });
}
