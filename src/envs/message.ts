/**
 * `messageEnv`: write an environment over chat messages instead of token ids. The episode sees the
 * assistant's reply as text and answers with the next user message; this module renders the chat
 * through the tokenizer's chat template (`chatPromptIds`, the run's prompt encoder for chats; the
 * plain "role: content" layout for a tokenizer without one) and hands the rollout loop ids.
 *
 * Token-in/token-out: the reply's sampled ids stay as sampled. The observation appended after it is
 * the text the template writes between the reply and the next assistant turn — the rest of the
 * reply's end-of-turn (what the sampled stop id did not already write), the user message, the
 * generation prompt — found by rendering the chat with and without the new messages, encoded
 * without added special tokens.
 */
import { chatPromptIds } from "../tokenizers/prompt.ts";
import type { ChatMessage } from "../tokenizers/chat.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Env, EnvStep, InitialObservation } from "./types.ts";

/** What a message episode answers to one reply. */
export interface MessageStep {
  reward: number;
  done: boolean;
  /** The next user message (text, or a message with its own role, e.g. "tool"); required when not done. */
  message?: string | ChatMessage;
  metrics?: Record<string, number>;
}

/** A multi-turn episode over chat messages. */
export interface MessageEpisode {
  /** The chat the episode opens with (system and user messages). */
  messages: ChatMessage[];
  /** Score the assistant's reply (decoded, special tokens dropped) and answer it. */
  reply(text: string, info: { truncated: boolean }): MessageStep | Promise<MessageStep>;
}

/**
 * An Env over a message episode, rendered with `tokenizer`'s chat template; turns stop at eos.
 * @throws Error (from step) when the template is not prefix-stable (rendering the longer chat does
 *   not extend the shorter one, so the observation cannot be appended token-in/token-out), or a
 *   step returns done: false without a message
 */
export function messageEnv(tokenizer: Tokenizer, episode: MessageEpisode): Env {
  const chat: ChatMessage[] = [...episode.messages];
  const render = (m: ChatMessage[], gen: boolean) => tokenizer.applyChatTemplate(m, { addGenerationPrompt: gen });
  return {
    initialObservation(): InitialObservation {
      return { tokens: Array.from(chatPromptIds(tokenizer, chat)), stopTokens: [tokenizer.eosId] };
    },
    async step(action, info): Promise<EnvStep> {
      const text = tokenizer.decode(action);
      const r = await episode.reply(text, info);
      const before = render(chat, true);
      chat.push({ role: "assistant", content: text });
      const out: EnvStep = { reward: r.reward, done: r.done, ...(r.metrics ? { metrics: r.metrics } : {}) };
      if (r.done) return out;
      if (r.message === undefined) throw new Error("messageEnv: reply() returned done: false without a message; return the next user message or done: true");
      chat.push(typeof r.message === "string" ? { role: "user", content: r.message } : r.message);
      out.observation = tokenizer.encode(observationText(before, render(chat.slice(0, -1), false), render(chat, true), text, tokenizer.decode(action, { skipSpecial: false })), { addSpecialTokens: false });
      return out;
    },
  };
}

/**
 * The text between a sampled reply and the next turn (pure; exposed for tests).
 * @param before the chat rendered up to the reply's generation prompt
 * @param withReply the chat with the reply, no generation prompt
 * @param next the chat with the reply and the new message, with the generation prompt
 * @param text the reply's text; @param sampled the reply's ids decoded with special tokens
 */
export function observationText(before: string, withReply: string, next: string, text: string, sampled: string): string {
  const turn = withReply.startsWith(before) ? withReply.slice(before.length) : null;
  if (turn === null || !turn.startsWith(text) || !next.startsWith(withReply)) {
    throw new Error("messageEnv: the chat template is not prefix-stable (rendering a longer chat changes the text of earlier turns), so observations cannot be appended token-in/token-out; use a token-level Env");
  }
  const tail = turn.slice(text.length); // the template's end of the reply's turn, e.g. "<|im_end|>\n"
  let k = tail.length;
  while (k > 0 && !sampled.endsWith(tail.slice(0, k))) k--;
  return tail.slice(k) + next.slice(withReply.length);
}
