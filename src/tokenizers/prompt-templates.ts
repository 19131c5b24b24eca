/**
 * Prompt templates: turn an Example into what the model sees.
 *
 * Named templates build a chat (a list of {role, content}):
 * - `plain`  — one user message holding the prompt.
 * - `r1`     — an R1-style system prompt asking for reasoning inside `<think>…</think>` and the
 *              final answer inside `<answer>…</answer>`, then the prompt as the user message.
 * - `boxed`  — the prompt followed by an instruction to reason step by step and put the final
 *              answer within `\boxed{}`.
 * Examples loaded from chat-formatted data (`meta.messages`) keep their own messages.
 *
 * The chat is then rendered either through a model's chat template (the `chat_template` of a
 * Hugging Face `tokenizer_config.json`, rendered with @huggingface/jinja via
 * src/tokenizers/chat.ts) or, without one, as text: `plain` gives the bare prompt (what small
 * character-level models train on), the others a "System:/User:/Assistant:" layout.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Example } from "../core/example.ts";
import { renderChatTemplate, pickChatTemplate, type ChatMessage, type TemplateSpecialTokens } from "./chat.ts";

/** Names of the built-in prompt templates. */
export type PromptTemplateName = "plain" | "r1" | "boxed";
export const PROMPT_TEMPLATES: PromptTemplateName[] = ["plain", "r1", "boxed"];

/** The R1-style system prompt (our wording). */
export const R1_SYSTEM_PROMPT =
  "You are a helpful assistant. First think the problem through inside <think> </think> tags, " +
  "then give only the final answer inside <answer> </answer> tags.";

/** The instruction appended by the `boxed` template. */
export const BOXED_INSTRUCTION = "Reason step by step, then put your final answer within \\boxed{}.";

/**
 * The chat for an example under a named template. A chat without a system message gets the
 * example's own `meta.system` (a dataset row's `system`), else `system` (`data.system`), first;
 * the `r1` template replaces any system message with its own.
 * @throws Error naming the known templates when `template` is unknown.
 */
export function buildMessages(example: Example, template: PromptTemplateName = "plain", system?: string): ChatMessage[] {
  const own = example.meta?.messages;
  let base: ChatMessage[] = Array.isArray(own) ? (own as ChatMessage[]) : [{ role: "user", content: example.prompt }];
  const sys = typeof example.meta?.system === "string" ? example.meta.system : system;
  if (sys !== undefined && !base.some((m) => m.role === "system")) base = [{ role: "system", content: sys }, ...base];
  switch (template) {
    case "plain":
      return base.map((m) => ({ ...m }));
    case "r1":
      return [{ role: "system", content: R1_SYSTEM_PROMPT }, ...base.filter((m) => m.role !== "system").map((m) => ({ ...m }))];
    case "boxed": {
      const out = base.map((m) => ({ ...m }));
      const last = out.map((m) => m.role).lastIndexOf("user");
      if (last >= 0) out[last] = { role: "user", content: `${out[last]!.content}\n${BOXED_INSTRUCTION}` };
      return out;
    }
    default:
      throw new Error(`unknown prompt template "${String(template)}"; known templates: ${PROMPT_TEMPLATES.join(", ")}`);
  }
}

/** A chat template with its special tokens, as read from tokenizer_config.json. */
export interface ChatTemplateConfig {
  template: string;
  specials: TemplateSpecialTokens;
  /** Extra template variables (e.g. `enable_thinking`). */
  extra?: Record<string, unknown>;
}

function tokenText(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (v && typeof v === "object" && typeof (v as { content?: unknown }).content === "string") return (v as { content: string }).content;
  return null;
}

/**
 * Read the chat template and special tokens from a Hugging Face `tokenizer_config.json`.
 * @throws Error naming the file when it is unreadable or has no `chat_template`.
 */
export function loadChatTemplate(path: string): ChatTemplateConfig {
  const cfg = readTokenizerConfig(path);
  const template = pickChatTemplate(cfg.chat_template, path);
  if (template === null) throw new Error(`${path} has no chat_template; use a named prompt template (${PROMPT_TEMPLATES.join(", ")}) instead`);
  return { template, specials: specialsOf(cfg) };
}

function readTokenizerConfig(path: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`cannot read ${path} as JSON (${(e as Error).message}); point to the model's tokenizer_config.json`);
  }
}

function specialsOf(cfg: Record<string, unknown>): TemplateSpecialTokens {
  return {
    bos_token: tokenText(cfg.bos_token),
    eos_token: tokenText(cfg.eos_token),
    pad_token: tokenText(cfg.pad_token),
    unk_token: tokenText(cfg.unk_token),
  };
}

/**
 * The chat template of a model: `path` is its tokenizer directory (tokenizer_config.json, or a
 * separate chat_template.jinja / chat_template.json next to it) or a tokenizer_config.json file.
 * @throws Error naming the path when no chat template is found there.
 */
export function loadChatTemplateFrom(path: string): ChatTemplateConfig {
  if (!existsSync(path)) throw new Error(`chat template: ${path} not found; pass a tokenizer directory or its tokenizer_config.json`);
  if (!statSync(path).isDirectory()) return loadChatTemplate(path);
  const cfgFile = join(path, "tokenizer_config.json");
  const jinja = join(path, "chat_template.jinja");
  const json = join(path, "chat_template.json");
  const fromCfg = existsSync(cfgFile) ? readTokenizerConfig(cfgFile) : {};
  // The same order as HfTokenizer.load and transformers: a separate file wins over tokenizer_config's.
  let template: string | null = null;
  if (existsSync(jinja)) template = readFileSync(jinja, "utf8");
  else if (existsSync(json)) template = pickChatTemplate(readTokenizerConfig(json).chat_template, json);
  template ??= pickChatTemplate(fromCfg.chat_template, cfgFile);
  if (template === null) {
    throw new Error(`no chat template in ${path} (looked for chat_template.jinja, chat_template.json and tokenizer_config.json's chat_template); use a named prompt template (${PROMPT_TEMPLATES.join(", ")}) instead`);
  }
  return { template, specials: specialsOf(fromCfg) };
}

/** Options for `renderPrompt`. */
export interface RenderOptions {
  /** Named template (default "plain"). */
  template?: PromptTemplateName;
  /** A chat template to render through; without one, the text layout described in the module doc. */
  chat?: ChatTemplateConfig;
  /** System message for examples without one (`data.system`; see buildMessages). */
  system?: string;
}

/**
 * The text a model is given for an example: the chat of the named template, rendered through
 * the chat template (with the generation prompt) or laid out as text.
 */
export function renderPrompt(example: Example, opts: RenderOptions = {}): string {
  const template = opts.template ?? "plain";
  const messages = buildMessages(example, template, opts.system);
  if (opts.chat) return renderChatTemplate(opts.chat.template, messages, true, opts.chat.specials, opts.chat.extra ?? {});
  if (messages.length === 1 && messages[0]!.role === "user") return messages[0]!.content;
  const label = (r: string) => r.charAt(0).toUpperCase() + r.slice(1);
  return messages.map((m) => `${label(m.role)}: ${m.content}`).join("\n") + "\nAssistant:";
}
