/**
 * Request → prompt token ids. Chats go through the tokenizer's chat template (Hugging Face
 * Jinja templates, with `tools` passed as transformers does) or, without a template, the plain
 * "role: content" layout with tools as a system message. The BOS id is prepended when the
 * tokenizer has one and the text did not already start with it (as `rlvr eval` encodes prompts).
 */
import type { Tokenizer } from "../tokenizers/types.ts";
import { ApiError } from "./errors.ts";
import type { ChatMessageIn, CompletionRequest, Tool } from "./schemas.ts";
import { plainToolsPrompt, renderToolCalls } from "./tools.ts";

/** Text to prompt ids (BOS first when the tokenizer has one). @throws ApiError 400 on text the tokenizer cannot encode. */
export function encodePrompt(tok: Tokenizer, text: string, param: string): Int32Array {
  let ids: number[];
  try {
    ids = tok.encode(text);
  } catch (e) {
    throw new ApiError(400, `cannot tokenize ${param}: ${(e as Error).message}`, "invalid_request_error", param, "invalid_value");
  }
  if (tok.bosId !== null && ids[0] !== tok.bosId) ids = [tok.bosId, ...ids];
  return Int32Array.from(ids);
}

/** A message's text: string content, text parts joined, tool calls in the `<tool_call>` convention. */
function messageText(m: ChatMessageIn): string {
  const c = m.content == null ? "" : typeof m.content === "string" ? m.content : m.content.map((p) => p.text).join("");
  if (m.role === "assistant" && m.tool_calls && m.tool_calls.length > 0) return [c, renderToolCalls(m.tool_calls)].filter(Boolean).join("\n");
  return c;
}

/** Whether the tokenizer renders through a template of its own (else the plain layout). */
function hasTemplate(tok: Tokenizer): boolean {
  return (tok as { chatTemplate?: string | null }).chatTemplate != null;
}

/** The prompt text of a chat (ending where the assistant's reply begins). @throws ApiError 400 when the template fails. */
export function chatPromptText(tok: Tokenizer, messages: ChatMessageIn[], tools: Tool[] | null | undefined): string {
  let msgs = messages.map((m) => ({ role: m.role === "developer" ? "system" : m.role, content: messageText(m) }));
  const withTools = tools && tools.length > 0;
  try {
    if (hasTemplate(tok)) {
      const apply = tok.applyChatTemplate as (m: { role: string; content: string }[], o: { addGenerationPrompt: boolean; extra?: Record<string, unknown> }) => string;
      return apply.call(tok, msgs, { addGenerationPrompt: true, ...(withTools ? { extra: { tools } } : {}) });
    }
    if (withTools) msgs = [{ role: "system", content: plainToolsPrompt(tools) }, ...msgs];
    return tok.applyChatTemplate(msgs, { addGenerationPrompt: true });
  } catch (e) {
    throw new ApiError(400, (e as Error).message, "invalid_request_error", "messages", "invalid_value");
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
