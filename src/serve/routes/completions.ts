/**
 * POST /v1/completions (OpenAI legacy Completions): a prompt string, strings, token ids or
 * token-id lists; choices are prompt-major (choice index = prompt index × n + j), as OpenAI and
 * vLLM number them. vLLM's `return_token_ids` adds per-choice `prompt_token_ids` and `token_ids`.
 * `logprobs: k` returns the sampled token's log-prob; `top_logprobs` holds that one token only.
 */
import type { FastifyInstance } from "fastify";
import type { ServeContext } from "../context.ts";
import { textPieces, tokenText, type Sample } from "../generate.ts";
import { completionPrompts } from "../prompt.ts";
import { completionRequestSchema, type CompletionRequest } from "../schemas.ts";
import { checkCaptureN, episodeOf, newId, parseBody, sampleRequest, sendSse, usage } from "./common.ts";

export function completionRoutes(app: FastifyInstance, ctx: ServeContext): void {
  app.post("/v1/completions", async (req, reply) => {
    const body = parseBody<CompletionRequest>(ctx, completionRequestSchema as never, req.body);
    const tok = ctx.tokenizer;
    const prompts = completionPrompts(tok, body.prompt, ctx.engine.info().vocabSize);
    const n = body.n ?? 1;
    const ids = episodeOf(req, body.metadata);
    checkCaptureN(ctx, ids, prompts.length * n);
    const maxTokens = body.max_tokens ?? 16;
    const { samples, policyVersion } = await sampleRequest(ctx, ids, prompts, body, maxTokens, "prompt");

    const id = newId("cmpl");
    const created = Math.floor(Date.now() / 1000);
    const tokenIds = body.return_token_ids === true;
    const echo = (s: Sample) => (body.echo ? tok.decode(prompts[s.promptIndex]!) : "");
    const logprobsOf = (s: Sample, from = 0, to = s.tokens.length) => {
      if (body.logprobs == null) return null;
      const toks = s.tokens.slice(from, to).map((t) => tokenText(tok, t));
      const offsets: number[] = [];
      let at = echo(s).length + tok.decode(s.tokens.slice(0, from)).length;
      for (const t of toks) {
        offsets.push(at);
        at += t.length;
      }
      const lps = s.logprobs.slice(from, to);
      return { tokens: toks, token_logprobs: lps, top_logprobs: body.logprobs > 0 ? toks.map((t, k) => ({ [t]: lps[k]! })) : null, text_offset: offsets };
    };
    const choiceIds = (s: Sample) => (tokenIds ? { prompt_token_ids: Array.from(prompts[s.promptIndex]!), token_ids: s.tokens } : {});

    if (!body.stream) {
      return {
        id,
        object: "text_completion",
        created,
        model: ctx.modelName,
        choices: samples.map((s, i) => ({ index: i, text: echo(s) + s.text, logprobs: logprobsOf(s), finish_reason: s.finishReason, ...choiceIds(s) })),
        usage: usage(prompts, samples),
        rlvr: { policy_version: policyVersion },
      };
    }
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({ id, object: "text_completion", created, model: ctx.modelName, choices, ...extra });
    const events: unknown[] = [];
    samples.forEach((s, i) => {
      textPieces(tok, s).forEach((text, k) => {
        const piece = (k === 0 ? echo(s) : "") + text;
        const ids2 = tokenIds ? { ...(k === 0 ? { prompt_token_ids: Array.from(prompts[s.promptIndex]!) } : {}), token_ids: [s.tokens[k]] } : {};
        events.push(chunk([{ index: i, text: piece, logprobs: logprobsOf(s, k, k + 1), finish_reason: null, ...ids2 }]));
      });
      events.push(chunk([{ index: i, text: "", logprobs: null, finish_reason: s.finishReason }]));
    });
    if (body.stream_options?.include_usage) events.push(chunk([], { usage: usage(prompts, samples) }));
    return sendSse(reply, events);
  });
}
