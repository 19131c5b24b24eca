/**
 * Request bodies of /v1/chat/completions, /v1/completions and /v1/responses (zod), with the
 * OpenAI API's field names and ranges, plus vLLM's `return_token_ids` extension. Unknown fields
 * are ignored by the two completion routes, as OpenAI-compatible servers do, and refused by
 * /v1/responses; a field out of range is a 400 naming it (errors.ts).
 */
import { z } from "zod";

const stop = z.union([z.string(), z.array(z.string()).max(4)]).nullish();

/** Fields both endpoints share. */
const sampling = {
  model: z.string().min(1),
  n: z.number().int().min(1).max(128).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  stop,
  seed: z.number().int().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  /** vLLM's extension: return prompt and completion token ids (docs/serve.md). */
  return_token_ids: z.boolean().nullish(),
  /** Capture mode: the episode this request belongs to (also the `x-rlvr-episode` header). */
  metadata: z.record(z.string(), z.unknown()).nullish(),
};

const textPart = z.object({ type: z.literal("text"), text: z.string() });
const content = z.union([z.string(), z.array(textPart)]).nullish();

const toolCall = z.object({
  id: z.string().nullish(),
  type: z.literal("function").nullish(),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** One chat message: system, developer, user, assistant (with optional tool calls) or tool. */
export const messageSchema = z.object({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content,
  name: z.string().nullish(),
  tool_calls: z.array(toolCall).nullish(),
  tool_call_id: z.string().nullish(),
});

/** One tool the model may call (OpenAI function-tool format). */
export const toolSchema = z.object({
  type: z.literal("function"),
  function: z.object({ name: z.string().min(1), description: z.string().nullish(), parameters: z.record(z.string(), z.unknown()).nullish() }),
});

export const chatRequestSchema = z.object({
  ...sampling,
  messages: z.array(messageSchema).min(1),
  max_completion_tokens: z.number().int().min(1).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  tools: z.array(toolSchema).nullish(),
  tool_choice: z.union([z.enum(["none", "auto", "required"]), z.object({ type: z.literal("function"), function: z.object({ name: z.string() }) })]).nullish(),
});

const tokenIds = z.array(z.number().int().min(0));

export const completionRequestSchema = z.object({
  ...sampling,
  /** A string, a list of strings, a list of token ids, or a list of token-id lists. */
  prompt: z.union([z.string(), z.array(z.string()).min(1), tokenIds.min(1), z.array(tokenIds.min(1)).min(1)]),
  logprobs: z.number().int().min(0).max(5).nullish(),
  echo: z.boolean().nullish(),
});

export type ChatRequest = z.infer<typeof chatRequestSchema>;
export type CompletionRequest = z.infer<typeof completionRequestSchema>;
export type ChatMessageIn = z.infer<typeof messageSchema>;
export type Tool = z.infer<typeof toolSchema>;

/**
 * /v1/responses (OpenAI Responses API), text in and out, with the fields vLLM's implementation
 * reads for plain generation. Strict: a field outside these (and the inert values of
 * routes/responses.ts) is a 400 naming it, never silently ignored.
 */
/** One text part of a message item's content. */
export const responsesTextPartSchema = z.strictObject({ type: z.enum(["input_text", "output_text"]), text: z.string(), annotations: z.array(z.unknown()).max(0).nullish(), logprobs: z.array(z.unknown()).nullish() });

/** One input item: a message (`type: "message"` or no type) whose content is text. */
export const responsesItemSchema = z.strictObject({
  type: z.literal("message").nullish(),
  role: z.enum(["user", "system", "developer", "assistant"]),
  /** A string, or parts (each checked against responsesTextPartSchema by prompt.ts). */
  content: z.union([z.string(), z.array(z.unknown())]),
  id: z.string().nullish(),
  status: z.literal("completed").nullish(),
});

export const responsesRequestSchema = z.strictObject({
  model: z.string().min(1),
  /** A string (one user message) or a list of message items; checked by responsesMessages (prompt.ts). */
  input: z.union([z.string(), z.array(z.unknown()).min(1)]),
  instructions: z.string().nullish(),
  max_output_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  stream: z.boolean().nullish(),
  /** The one inclusion served: the sampled tokens' log-probs on each output_text part. */
  include: z.array(z.literal("message.output_text.logprobs")).nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  /** vLLM's extensions. */
  seed: z.number().int().nullish(),
  stop,
  /** Capture mode: the episode this request belongs to (also the `x-rlvr-episode` header). */
  metadata: z.record(z.string(), z.unknown()).nullish(),
  /** An end-user id (recorded nowhere). */
  user: z.string().nullish(),
});

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
export type ResponsesItem = z.infer<typeof responsesItemSchema>;
