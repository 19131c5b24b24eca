/** Pieces both completion routes share: parsing, defaults, capture, SSE framing. */
import { randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ZodType } from "zod";
import type { ServeContext } from "../context.ts";
import { ApiError, fromZod } from "../errors.ts";
import { checkBudget, generate, type Sample } from "../generate.ts";

/** Parse `req.body` with `schema`; 400 naming the field on failure. The model must be the served one (404 otherwise). */
export function parseBody<T extends { model: string }>(ctx: ServeContext, schema: ZodType<T>, body: unknown): T {
  if (body === undefined || body === null || typeof body !== "object") throw new ApiError(400, "the request body must be a JSON object", "invalid_request_error", null, "invalid_value");
  const r = schema.safeParse(body);
  if (!r.success) throw fromZod(r.error);
  if (r.data.model !== ctx.modelName) throw new ApiError(404, `the model "${r.data.model}" does not exist; this server serves "${ctx.modelName}" (GET /v1/models)`, "invalid_request_error", "model", "model_not_found");
  return r.data;
}

/** The request's stop strings as a list. */
export function stopList(stop: string | string[] | null | undefined): string[] {
  return stop == null ? [] : typeof stop === "string" ? [stop] : stop;
}

/** Capture ids of a request: header first, then `metadata`. */
export function episodeOf(req: FastifyRequest, metadata: Record<string, unknown> | null | undefined): { episode?: string; group?: string } {
  const h = (k: string) => {
    const v = req.headers[k];
    return typeof v === "string" && v.length > 0 ? v : undefined;
  };
  const m = (k: string) => (metadata && typeof metadata[k] === "string" ? (metadata[k] as string) : undefined);
  const episode = h("x-rlvr-episode") ?? m("episode_id");
  const group = h("x-rlvr-group") ?? m("group_id");
  return { ...(episode ? { episode } : {}), ...(group ? { group } : {}) };
}

/** Record the samples of a request under its episode (capture mode only). */
export function capture(ctx: ServeContext, ids: { episode?: string; group?: string }, prompts: Int32Array[], samples: Sample[], policyVersion: number): void {
  if (!ctx.episodes || !ids.episode) return;
  for (const s of samples) {
    ctx.episodes.record(ids.episode, { promptTokens: Array.from(prompts[s.promptIndex]!), tokens: s.tokens, logprobs: s.logprobs, policyVersion, finishReason: s.finishReason }, ids.group);
  }
}

/** Capture needs one choice per request. @throws ApiError 400 otherwise. */
export function checkCaptureN(ctx: ServeContext, ids: { episode?: string }, rows: number): void {
  if (ctx.episodes && ids.episode && rows !== 1) throw new ApiError(400, "a captured request (x-rlvr-episode) records one trajectory: send one prompt with n = 1", "invalid_request_error", "n", "invalid_value");
}

/** A response id with `prefix` (e.g. "chatcmpl-…"; the Responses API's ids use "_": "resp_…"). */
export function newId(prefix: string, sep = "-"): string {
  return `${prefix}${sep}${randomBytes(12).toString("hex")}`;
}

/** Send `events` as a Server-Sent Events body ending with `data: [DONE]`. */
export function sendSse(reply: FastifyReply, events: unknown[]): FastifyReply {
  const body = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n";
  return reply.header("content-type", "text/event-stream; charset=utf-8").header("cache-control", "no-cache").send(body);
}

/**
 * Send typed `events` as named Server-Sent Events (`event: <type>` then `data: <json>`), the
 * Responses API's framing: no `[DONE]` line, the stream ends after the last event.
 */
export function sendNamedSse(reply: FastifyReply, events: { type: string }[]): FastifyReply {
  const body = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
  return reply.header("content-type", "text/event-stream; charset=utf-8").header("cache-control", "no-cache").send(body);
}

/** The OpenAI `usage` block: prompt tokens (each prompt once), completion tokens (every choice). */
export function usage(prompts: Int32Array[], samples: Sample[]): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  const p = prompts.reduce((s, x) => s + x.length, 0);
  const c = samples.reduce((s, x) => s + x.tokens.length, 0);
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
}

/** The sampling fields both routes accept. */
export interface SamplingFields {
  n?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stop?: string | string[] | null;
  seed?: number | null;
}

/**
 * Check the length budget, sample `prompts` with the request's settings and record the samples
 * in capture mode.
 * @param field the request field named by a budget error ("messages", "prompt")
 * @throws ApiError 400 when prompt + maxTokens does not fit the model
 */
export async function sampleRequest(ctx: ServeContext, ids: { episode?: string; group?: string }, prompts: Int32Array[], body: SamplingFields, maxTokens: number, field: string): Promise<{ samples: Sample[]; policyVersion: number }> {
  checkBudget(ctx.engine, prompts, maxTokens, field);
  const out = await generate(ctx.batcher, ctx.tokenizer, prompts, {
    n: body.n ?? 1,
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    maxTokens,
    stop: stopList(body.stop),
    ...(body.seed != null ? { seed: body.seed } : {}),
  });
  capture(ctx, ids, prompts, out.samples, out.policyVersion);
  return out;
}
