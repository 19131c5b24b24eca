/**
 * The one place a prompt becomes token ids. Training, every sampler (they receive these ids),
 * `rlvr eval`, `evaluateCheckpoint` and `rlvr serve` all encode through `promptEncoder` /
 * `chatPromptIds`, so one example gives the same prompt ids everywhere.
 *
 * - Text prompts (`chat` off): the named template's text (src/tokenizers/prompt-templates.ts), encoded with the
 *   tokenizer's special tokens (`encode`'s default, as `add_special_tokens=True`): `<bos>` first
 *   for a char tokenizer, nothing for SmolLM2.
 * - Chats (`chat: true`, and every chat request to `rlvr serve`): the model's own Jinja chat
 *   template with `add_generation_prompt`, encoded WITHOUT adding special tokens — the template
 *   writes them — exactly as transformers' `apply_chat_template(messages,
 *   add_generation_prompt=True, tokenize=True)`. The assistant's turn ends at the template's
 *   end-of-turn token, which must be the tokenizer's eos (where sampling stops; decode drops it).
 */
import type { Tokenizer } from "./types.ts";
import type { ChatMessage } from "./chat.ts";
import type { Example } from "../core/example.ts";
import { buildMessages, renderPrompt, type PromptTemplateName } from "./prompt-templates.ts";

/** How examples become prompts: a run config's `data.template`, `data.chat` and `data.system`. */
export interface PromptFormat {
  /** Named prompt template (plain, r1, boxed; default plain). */
  template?: PromptTemplateName;
  /** Render each example's chat through the tokenizer's chat template (default false). */
  chat?: boolean;
  /** System message for examples whose row has none (`data.system`). */
  system?: string;
}

/** The tokenizer's chat template, or null (CharTokenizer and HfTokenizer expose `chatTemplate`). */
export function chatTemplateOf(tok: Tokenizer): string | null {
  return (tok as { chatTemplate?: string | null }).chatTemplate ?? null;
}

/**
 * A chat to prompt ids, ending where the assistant's reply begins. With a chat template: rendered
 * with `add_generation_prompt` and encoded without added special tokens (transformers'
 * `apply_chat_template(…, tokenize=True)`). Without one: the plain "role: content" layout encoded
 * with the tokenizer's special tokens.
 * @param extra more template variables (e.g. `tools`, `enable_thinking`)
 * @throws Error from the template (syntax, `raise_exception`) or the tokenizer (unknown character)
 */
export function chatPromptIds(tok: Tokenizer, messages: ChatMessage[], extra?: Record<string, unknown>): Int32Array {
  if (chatTemplateOf(tok) === null) return Int32Array.from(tok.encode(tok.applyChatTemplate(messages, { addGenerationPrompt: true })));
  const apply = tok.applyChatTemplate as (m: ChatMessage[], o: { addGenerationPrompt: boolean; extra?: Record<string, unknown> }) => string;
  return Int32Array.from(tok.encode(apply.call(tok, messages, { addGenerationPrompt: true, ...(extra ? { extra } : {}) }), { addSpecialTokens: false }));
}

const PROBE = "RLVRENDOFTURNPROBE";

/**
 * The token the chat template ends an assistant turn with, or null when the template writes no
 * special token there (then sampling ends at eos as usual). Found by rendering a one-turn chat with
 * a marker reply and taking the first special token after the marker.
 */
export function endOfTurnId(tok: Tokenizer): number | null {
  let text: string;
  try {
    text = tok.applyChatTemplate([{ role: "user", content: "1" }, { role: "assistant", content: PROBE }], { addGenerationPrompt: false });
  } catch {
    return null;
  }
  const at = text.lastIndexOf(PROBE);
  if (at < 0) return null;
  const special = (id: number) => tok.decode([id], { skipSpecial: true }) === "" && tok.decode([id], { skipSpecial: false }) !== "";
  return tok.encode(text.slice(at + PROBE.length), { addSpecialTokens: false }).find(special) ?? null;
}

/**
 * The chat of an example: its own messages (`meta.messages`, from a dataset row's `messages`) or
 * its prompt as one user message, shaped by the named template, with the row's `system` (or else
 * `format.system`) first when the chat has no system message.
 */
export function exampleMessages(example: Example, format: PromptFormat = {}): ChatMessage[] {
  return buildMessages(example, format.template ?? "plain", format.system);
}

/**
 * THE prompt encoder: checks the tokenizer against `format` once, then maps an example to its
 * prompt ids (chat template or text, as the module comment says).
 * @param where names the tokenizer (its directory) in errors
 * @throws Error when `format.chat` is set and the tokenizer has no chat template, or the
 *   template's end-of-turn token is not the tokenizer's eos (sampling would run past the turn)
 */
export function promptEncoder(tok: Tokenizer, format: PromptFormat = {}, where = "the tokenizer"): (example: Example) => Int32Array {
  if (!format.chat) return (ex) => Int32Array.from(tok.encode(renderPrompt(ex, { template: format.template, system: format.system })));
  if (chatTemplateOf(tok) === null) {
    throw new Error(`data.chat: ${where} has no chat template (tokenizer_config.json "chat_template" or chat_template.jinja); add the model's template, or set data.chat: false (rlvr eval: --no-chat)`);
  }
  const eot = endOfTurnId(tok);
  if (eot !== null && eot !== tok.eosId) {
    const name = (id: number) => JSON.stringify(tok.decode([id], { skipSpecial: false }));
    throw new Error(`data.chat: ${where}'s chat template ends an assistant turn with ${name(eot)} (id ${eot}) but eos_token is ${name(tok.eosId)} (id ${tok.eosId}); sampling stops at eos, so set eos_token in tokenizer_config.json to ${name(eot)}`);
  }
  return (ex) => chatPromptIds(tok, exampleMessages(ex, format));
}

/** One example's prompt ids (`promptEncoder(tok, format)(example)`). */
export function promptIds(tok: Tokenizer, example: Example, format: PromptFormat = {}): Int32Array {
  return promptEncoder(tok, format)(example);
}
