/**
 * Chat rendering shared by every tokenizer: Hugging Face chat templates (Jinja, rendered by
 * `@huggingface/jinja` as transformers' `apply_chat_template` does) and a plain fallback.
 */
import { Template } from "@huggingface/jinja";

/** One chat turn. */
export interface ChatMessage {
  role: string;
  content: string;
}

/** Special-token strings exposed to templates as `bos_token`, `eos_token`, `pad_token`, `unk_token`. */
export interface TemplateSpecialTokens {
  bos_token?: string | null;
  eos_token?: string | null;
  pad_token?: string | null;
  unk_token?: string | null;
}

const compiled = new Map<string, Template>();

/**
 * Render `messages` through a Hugging Face chat template (the `chat_template` string of
 * tokenizer_config.json). Variables: `messages`, `add_generation_prompt`, the special-token
 * strings, plus `extra` (e.g. `tools`, `enable_thinking`).
 * @throws Error quoting the template error (syntax error, or `raise_exception` in the template).
 */
export function renderChatTemplate(
  template: string,
  messages: ChatMessage[],
  addGenerationPrompt: boolean,
  specials: TemplateSpecialTokens,
  extra: Record<string, unknown> = {},
): string {
  let t = compiled.get(template);
  try {
    if (!t) {
      t = new Template(template);
      compiled.set(template, t);
    }
    return t.render({
      ...Object.fromEntries(Object.entries(specials).map(([k, v]) => [k, v ?? ""])),
      ...extra,
      messages,
      add_generation_prompt: addGenerationPrompt,
    });
  } catch (e) {
    throw new Error(`chat template error: ${(e as Error).message}`);
  }
}

/**
 * The layout used when a tokenizer has no chat template: one `role: content` line per message,
 * then `assistant: ` when a generation prompt is asked for.
 * Example: [{user, "1+1?"}] → "user: 1+1?\nassistant: ".
 */
export function plainChat(messages: ChatMessage[], addGenerationPrompt: boolean): string {
  let s = "";
  for (const m of messages) s += `${m.role}: ${m.content}\n`;
  if (addGenerationPrompt) s += "assistant: ";
  return s;
}

/**
 * Pick the template string from tokenizer_config.json's `chat_template`, which is either a
 * string or a list of {name, template} (the one named "default" is used).
 * @returns the template, or null when there is none.
 */
export function pickChatTemplate(value: unknown, file: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const named = value as { name?: unknown; template?: unknown }[];
    const def = named.find((t) => t && t.name === "default") ?? (named.length === 1 ? named[0] : undefined);
    if (def && typeof def.template === "string") return def.template;
    throw new Error(`tokenizer error in ${file} at chat_template: a list of templates needs one named "default" (found ${named.map((t) => JSON.stringify(t?.name)).join(", ")})`);
  }
  throw new Error(`tokenizer error in ${file} at chat_template: expected a string or a list of {name, template}`);
}
