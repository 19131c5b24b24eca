/**
 * POST /v1/responses (OpenAI Responses API), text in and out, as vLLM implements it for plain
 * generation: `input` (a string or message items), `instructions`, `max_output_tokens`,
 * `temperature`, `top_p`, `stream`, `include: ["message.output_text.logprobs"]` with
 * `top_logprobs`, plus vLLM's `seed` and `stop`. The prompt is rendered by the
 * same chat template as /v1/chat/completions and sampled through the same batcher (and captured
 * by episode in capture mode). Streaming sends the Responses API's named events: response.created,
 * response.in_progress, output_item.added, content_part.added, output_text.delta (one per token),
 * output_text.done, content_part.done, output_item.done, then response.completed (or
 * response.incomplete when `max_output_tokens` cut the reply).
 *
 * Fail closed: this server keeps no responses and runs no tools, so a field outside the list —
 * `tools`, `previous_response_id`, `background`, `store: true`, `reasoning`, … — is a
 * 400 naming it, except for the values that ask for nothing (`tools: []`, `store: false`, …).
 */
import type { FastifyInstance } from "fastify";
import type { ServeContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { roomLeft, textPieces, tokenText } from "../generate.ts";
import { chatPrompt, responsesMessages } from "../prompt.ts";
import { responsesRequestSchema, type ResponsesRequest } from "../schemas.ts";
import { episodeOf, newId, parseBody, sampleRequest, sendNamedSse } from "./common.ts";

/** Fields the schema does not take, with the values that ask for nothing (accepted and dropped). */
const INERT: Record<string, (v: unknown) => boolean> = {
  background: (v) => v == null || v === false,
  previous_response_id: (v) => v == null,
  store: (v) => v == null || v === false,
  tools: (v) => v == null || (Array.isArray(v) && v.length === 0),
  tool_choice: (v) => v == null || v === "auto" || v === "none",
  parallel_tool_calls: (v) => v == null || typeof v === "boolean",
  reasoning: (v) => v == null,
  truncation: (v) => v == null || v === "disabled",
  text: (v) => v == null || JSON.stringify(v) === '{"format":{"type":"text"}}',
};

/** Why a field is refused, by field (the fix in the message). */
const WHY: Record<string, string> = {
  previous_response_id: "this server keeps no responses: send the whole conversation in `input`",
  store: "this server keeps no responses: omit `store` or send false",
  background: "requests are answered in the call: omit `background`",
  tools: "tool calls are served by /v1/chat/completions",
  tool_choice: "tool calls are served by /v1/chat/completions",
};

/**
 * The request body without its inert fields.
 * @throws ApiError 400 `unsupported_parameter` naming the first field this endpoint does not serve.
 */
function checkFields(body: unknown): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return body;
  const known = new Set(Object.keys(responsesRequestSchema.shape));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (known.has(k)) out[k] = v;
    else if (!(Object.hasOwn(INERT, k) && INERT[k]!(v))) {
      const why = Object.hasOwn(WHY, k) ? WHY[k] : "this server answers text in, text out (docs/serve.md lists the fields)";
      throw new ApiError(400, `/v1/responses does not support "${k}" here: ${why}`, "invalid_request_error", k, "unsupported_parameter");
    }
  }
  return out;
}

export function responsesRoutes(app: FastifyInstance, ctx: ServeContext): void {
  app.post("/v1/responses", async (req, reply) => {
    const body = parseBody<ResponsesRequest>(ctx, responsesRequestSchema as never, checkFields(req.body));
    const prompt = chatPrompt(ctx.tokenizer, responsesMessages(body), null, "input");
    const prompts = [prompt];
    const ids = episodeOf(req, body.metadata);
    const maxTokens = body.max_output_tokens ?? Math.max(1, roomLeft(ctx.engine, prompts));
    const { samples, policyVersion } = await sampleRequest(ctx, ids, prompts, { ...body, n: 1 }, maxTokens, "input");
    const s = samples[0]!;

    const id = newId("resp", "_");
    const itemId = newId("msg", "_");
    const createdAt = Math.floor(Date.now() / 1000);
    const incomplete = s.finishReason === "length";
    // Log-probs (include: ["message.output_text.logprobs"]): the sampled token's, as for chat.
    const withLogprobs = body.include?.includes("message.output_text.logprobs") ?? false;
    const entry = (k: number) => {
      const token = tokenText(ctx.tokenizer, s.tokens[k]!);
      return { token, logprob: s.logprobs[k]!, bytes: Array.from(Buffer.from(token, "utf8")) };
    };
    const logprobs = (from: number, to: number) => (withLogprobs ? s.tokens.slice(from, to).map((_, j) => ({ ...entry(from + j), top_logprobs: (body.top_logprobs ?? 0) > 0 ? [entry(from + j)] : [] })) : []);
    const message = (status: string, text: string | null) => ({ id: itemId, type: "message", role: "assistant", status, content: text === null ? [] : [{ type: "output_text", text, annotations: [], logprobs: logprobs(0, s.tokens.length) }] });
    const response = (done: boolean) => ({
      id,
      object: "response",
      created_at: createdAt,
      model: ctx.modelName,
      status: done ? (incomplete ? "incomplete" : "completed") : "in_progress",
      error: null,
      incomplete_details: done && incomplete ? { reason: "max_output_tokens" } : null,
      instructions: body.instructions ?? null,
      max_output_tokens: maxTokens,
      metadata: body.metadata ?? {},
      output: done ? [message("completed", s.text)] : [],
      parallel_tool_calls: false,
      previous_response_id: null,
      reasoning: null,
      store: false,
      temperature: body.temperature ?? 1,
      text: { format: { type: "text" } },
      tool_choice: "none",
      tools: [],
      top_logprobs: body.top_logprobs ?? 0,
      top_p: body.top_p ?? 1,
      truncation: "disabled",
      usage: done ? { input_tokens: prompt.length, input_tokens_details: { cached_tokens: 0 }, output_tokens: s.tokens.length, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: prompt.length + s.tokens.length } : null,
      rlvr: { policy_version: policyVersion },
    });
    if (!body.stream) return response(true);

    // The engine returns whole samples: the events follow generation (one delta per token).
    const at = { item_id: itemId, output_index: 0, content_index: 0 };
    const events: Record<string, unknown>[] = [
      { type: "response.created", response: response(false) },
      { type: "response.in_progress", response: response(false) },
      { type: "response.output_item.added", output_index: 0, item: message("in_progress", null) },
      { type: "response.content_part.added", ...at, part: { type: "output_text", text: "", annotations: [], logprobs: [] } },
      ...textPieces(ctx.tokenizer, s).map((delta, k) => ({ type: "response.output_text.delta", ...at, delta, logprobs: logprobs(k, k + 1) })),
      { type: "response.output_text.done", ...at, text: s.text, logprobs: logprobs(0, s.tokens.length) },
      { type: "response.content_part.done", ...at, part: { type: "output_text", text: s.text, annotations: [], logprobs: logprobs(0, s.tokens.length) } },
      { type: "response.output_item.done", output_index: 0, item: message("completed", s.text) },
      { type: incomplete ? "response.incomplete" : "response.completed", response: response(true) },
    ];
    return sendNamedSse(reply, events.map((e, k) => ({ ...e, type: e.type as string, sequence_number: k })));
  });
}
