/**
 * POST /v1/chat/completions (OpenAI Chat Completions), with streaming, logprobs, tools and
 * vLLM's `return_token_ids` (top-level `prompt_token_ids`, per-choice `token_ids`).
 *
 * `top_logprobs`: engines report only the sampled token's log-prob, so each position's
 * `top_logprobs` list holds at most that one entry (docs/serve.md).
 */
import type { FastifyInstance } from "fastify";
import type { ServeContext } from "../context.ts";
import { roomLeft, textPieces, tokenText, type Sample } from "../generate.ts";
import { chatPrompt } from "../prompt.ts";
import { chatRequestSchema, type ChatRequest } from "../schemas.ts";
import { parseToolCalls, type ToolCall } from "../tools.ts";
import { checkCaptureN, episodeOf, newId, parseBody, sampleRequest, sendSse, usage } from "./common.ts";

type Entry = { token: string; logprob: number; bytes: number[] };

export function chatRoutes(app: FastifyInstance, ctx: ServeContext): void {
  app.post("/v1/chat/completions", async (req, reply) => {
    const body = parseBody<ChatRequest>(ctx, chatRequestSchema as never, req.body);
    const tok = ctx.tokenizer;
    const prompt = chatPrompt(tok, body.messages, body.tool_choice === "none" ? null : body.tools);
    const prompts = [prompt];
    const n = body.n ?? 1;
    const ids = episodeOf(req, body.metadata);
    checkCaptureN(ctx, ids, n);
    const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? Math.max(1, roomLeft(ctx.engine, prompts));
    const { samples, policyVersion } = await sampleRequest(ctx, ids, prompts, body, maxTokens, "messages");

    const useTools = !!body.tools && body.tools.length > 0 && body.tool_choice !== "none";
    const id = newId("chatcmpl");
    const created = Math.floor(Date.now() / 1000);
    const entry = (t: number, lp: number): Entry => {
      const s = tokenText(tok, t);
      return { token: s, logprob: lp, bytes: Array.from(Buffer.from(s, "utf8")) };
    };
    const logprobsOf = (s: Sample, from = 0, to = s.tokens.length) =>
      body.logprobs ? { content: s.tokens.slice(from, to).map((t, k) => ({ ...entry(t, s.logprobs[from + k]!), top_logprobs: (body.top_logprobs ?? 0) > 0 ? [entry(t, s.logprobs[from + k]!)] : [] })) } : null;
    const parsed = samples.map((s) => (useTools ? parseToolCalls(s.text) : { content: s.text, calls: [] as ToolCall[] }));
    const finish = (i: number) => (parsed[i]!.calls.length > 0 ? "tool_calls" : samples[i]!.finishReason);
    const tokenIds = body.return_token_ids === true;

    if (!body.stream) {
      return {
        id,
        object: "chat.completion",
        created,
        model: ctx.modelName,
        choices: samples.map((s, i) => ({
          index: i,
          message: { role: "assistant", content: parsed[i]!.content, ...(parsed[i]!.calls.length > 0 ? { tool_calls: parsed[i]!.calls } : {}) },
          logprobs: logprobsOf(s),
          finish_reason: finish(i),
          ...(tokenIds ? { token_ids: s.tokens } : {}),
        })),
        usage: usage(prompts, samples),
        ...(tokenIds ? { prompt_token_ids: Array.from(prompt) } : {}),
        rlvr: { policy_version: policyVersion },
      };
    }

    // Streaming: the engine returns whole samples, so the chunks follow generation (one per token).
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({ id, object: "chat.completion.chunk", created, model: ctx.modelName, choices, ...extra });
    const events: unknown[] = [];
    samples.forEach((s, i) => {
      events.push(chunk([{ index: i, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }], tokenIds && i === 0 ? { prompt_token_ids: Array.from(prompt) } : {}));
      if (parsed[i]!.calls.length > 0) {
        const calls = parsed[i]!.calls.map((c, k) => ({ index: k, ...c }));
        events.push(chunk([{ index: i, delta: { content: parsed[i]!.content, tool_calls: calls }, logprobs: logprobsOf(s), finish_reason: null, ...(tokenIds ? { token_ids: s.tokens } : {}) }]));
      } else {
        textPieces(tok, s).forEach((piece, k) => {
          events.push(chunk([{ index: i, delta: { content: piece }, logprobs: logprobsOf(s, k, k + 1), finish_reason: null, ...(tokenIds ? { token_ids: [s.tokens[k]] } : {}) }]));
        });
      }
      events.push(chunk([{ index: i, delta: {}, logprobs: null, finish_reason: finish(i) }]));
    });
    if (body.stream_options?.include_usage) events.push(chunk([], { usage: usage(prompts, samples) }));
    return sendSse(reply, events);
  });
}
