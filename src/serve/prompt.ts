/**
 * Request → prompt token ids, through the same functions as training and evaluation
 * (src/tokenizers/prompt.ts): chats go through the tokenizer's chat template (Hugging Face Jinja
 * templates, with `tools` passed as transformers does) and are encoded without added special
 * tokens, as transformers' `apply_chat_template(…, tokenize=True)`; without a template, the plain
 * "role: content" layout (tools as a system message). Completion prompts (text) are encoded with
 * the tokenizer's special tokens, as vLLM and `add_special_tokens=True` do.
 */
import type { Tokenizer } from "../tokenizers/types.ts";
import { chatPromptIds, chatTemplateOf } from "../tokenizers/prompt.ts";
import { ApiError, fromZod } from "./errors.ts";
import type { ZodType } from "zod";
import { responsesItemSchema, responsesTextPartSchema, type ChatMessageIn, type CompletionRequest, type ResponsesRequest, type Tool } from "./schemas.ts";
import { plainToolsPrompt, renderToolCalls } from "./tools.ts";

/** Text to prompt ids, with the tokenizer's special tokens. @throws ApiError 400 on text the tokenizer cannot encode. */
export function encodePrompt(tok: Tokenizer, text: string, param: string): Int32Array {
  try {
    return Int32Array.from(tok.encode(text));
  } catch (e) {
    throw new ApiError(400, `cannot tokenize ${param}: ${(e as Error).message}`, "invalid_request_error", param, "invalid_value");
  }
}

/** A message's text: string content, text parts joined, tool calls in the `<tool_call>` convention. */
function messageText(m: ChatMessageIn): string {
  const c = m.content == null ? "" : typeof m.content === "string" ? m.content : m.content.map((p) => p.text).join("");
  if (m.role === "assistant" && m.tool_calls && m.tool_calls.length > 0) return [c, renderToolCalls(m.tool_calls)].filter(Boolean).join("\n");
  return c;
}

/**
 * The prompt ids of a chat request (ending where the assistant's reply begins).
 * @param param the request field an error names ("messages"; "input" for /v1/responses)
 * @throws ApiError 400 when the template fails or the tokenizer cannot encode the text.
 */
export function chatPrompt(tok: Tokenizer, messages: ChatMessageIn[], tools: Tool[] | null | undefined, param = "messages"): Int32Array {
  let msgs = messages.map((m) => ({ role: m.role === "developer" ? "system" : m.role, content: messageText(m) }));
  const withTools = !!tools && tools.length > 0;
  try {
    if (chatTemplateOf(tok) !== null) return chatPromptIds(tok, msgs, withTools ? { tools } : undefined);
    if (withTools) msgs = [{ role: "system", content: plainToolsPrompt(tools) }, ...msgs];
    return chatPromptIds(tok, msgs);
  } catch (e) {
    const msg = (e as Error).message;
    // A character model knows only its alphabet: the chat layout's own letters may be outside it.
    const hint = /is not in the alphabet/.test(msg) && chatTemplateOf(tok) === null
      ? `; this character model renders chats as "role: content" lines, whose letters its alphabet lacks — send the prompt text to /v1/completions instead`
      : "";
    throw new ApiError(400, msg + hint, "invalid_request_error", param, "invalid_value");
  }
}

/** The prompts of a completions request (one per string or token-id list). @throws ApiError 400 on ids outside the vocabulary. */
export function completionPrompts(tok: Tokenizer, prompt: CompletionRequest["prompt"], vocabSize: number): Int32Array[] {
  const list: (string | number[])[] = typeof prompt === "string" ? [prompt] : typeof prompt[0] === "number" ? [prompt as number[]] : (prompt as (string | number[])[]);
  return list.map((p, i) => {
    if (typeof p === "string") return encodePrompt(tok, p, list.length > 1 ? `prompt.${i}` : "prompt");
    const bad = p.find((id) => id >= vocabSize);
    if (bad !== undefined) throw new ApiError(400, `token id ${bad} in prompt is outside the vocabulary [0, ${vocabSize})`, "invalid_request_error", "prompt", "invalid_value");
    return Int32Array.from(p);
  });
}

/**
 * The chat messages of a /v1/responses request, as vLLM builds them: `instructions` as a system
 * message, then `input` — a string is one user message; a list holds message items whose content
 * is a string or text parts (`input_text`, `output_text`), joined.
 * @throws ApiError 400 naming `input.<i>…` for any other item (function calls, reasoning, item
 *   references, images, files): this server answers text only and keeps no responses.
 */
export function responsesMessages(body: Pick<ResponsesRequest, "instructions" | "input">): ChatMessageIn[] {
  const msgs: ChatMessageIn[] = body.instructions ? [{ role: "system", content: body.instructions }] : [];
  if (typeof body.input === "string") return [...msgs, { role: "user", content: body.input }];
  body.input.forEach((raw, i) => {
    const item = parseItem(responsesItemSchema, raw, `input.${i}`, "message");
    const c = item.content;
    const text = typeof c === "string" ? c : c.map((p, j) => parseItem(responsesTextPartSchema, p, `input.${i}.content.${j}`, "input_text").text).join("");
    msgs.push({ role: item.role, content: text });
  });
  return msgs;
}

/** `raw` parsed by `schema`; a `type` other than `type` (when given) or a bad field is a 400 naming `at.<field>`. */
function parseItem<T>(schema: ZodType<T>, raw: unknown, at: string, type: string): T {
  const got = raw !== null && typeof raw === "object" ? (raw as { type?: unknown }).type : undefined;
  if (got != null && got !== type && !(type === "input_text" && got === "output_text")) {
    throw new ApiError(400, `${at}.type "${String(got)}" is not supported: /v1/responses here takes text messages only (tool calls go to /v1/chat/completions; this server keeps no responses to reference)`, "invalid_request_error", `${at}.type`, "unsupported_value");
  }
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const e = fromZod(r.error);
  const param = e.param ? `${at}.${e.param}` : at;
  throw new ApiError(400, `invalid request at ${param}: ${r.error.issues[0]!.message}`, "invalid_request_error", param, "invalid_value");
}
