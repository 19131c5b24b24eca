/**
 * The path every completion takes: budget check, one batched engine call, then per sample the
 * stop strings, the text and the finish reason. Shared by /v1/chat/completions and /v1/completions.
 */
import type { Engine, SampleResult } from "../core/engine.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Batcher } from "./batcher.ts";
import { ApiError } from "./errors.ts";

/** One finished sample, ready to format. */
export interface Sample {
  /** Index of the prompt it answers (completions requests may hold several). */
  promptIndex: number;
  /** Response token ids (after stop-string truncation; the EOS token kept when it ended the sample). */
  tokens: number[];
  /** Sampler log-prob of each token (nats, after temperature), [tokens.length]. */
  logprobs: number[];
  /** Decoded response (special tokens dropped), cut before a stop string. */
  text: string;
  /** OpenAI finish reason: "stop" (EOS or stop string) or "length" (max_tokens). */
  finishReason: "stop" | "length";
}

/** Settings of one request after defaults. */
export interface GenerateSettings {
  n: number;
  temperature: number;
  topP: number;
  maxTokens: number;
  stop: string[];
  seed?: number;
}

/**
 * Check that prompt + max_tokens fits the model. The embedded engine pads prompts to a multiple
 * of 4 tokens, so the check uses the padded length (a few tokens conservative for other engines).
 * @throws ApiError 400 `context_length_exceeded` naming both lengths.
 */
export function checkBudget(engine: Engine, prompts: Int32Array[], maxTokens: number, param: string): void {
  const ctx = engine.info().maxSeqLen;
  for (const p of prompts) {
    const padded = Math.ceil(p.length / 4) * 4;
    if (padded + maxTokens > ctx) {
      throw new ApiError(400, `this model's context is ${ctx} tokens; the prompt has ${p.length} tokens (${padded} padded) and max_tokens is ${maxTokens}; shorten the prompt or lower max_tokens to ${Math.max(0, ctx - padded)}`, "invalid_request_error", param, "context_length_exceeded");
    }
  }
}

/** The most tokens a reply to the longest of `prompts` may have. */
export function roomLeft(engine: Engine, prompts: Int32Array[]): number {
  const longest = Math.max(...prompts.map((p) => Math.ceil(p.length / 4) * 4));
  return engine.info().maxSeqLen - longest;
}

/**
 * Cut a sample at the first stop string: the tokens up to (and including) the one that completed
 * it, the text before it. Without a stop string the sample is unchanged.
 */
export function applyStop(tok: Tokenizer, r: SampleResult, stop: string[]): Sample {
  const tokens = Array.from(r.tokens);
  const logprobs = Array.from(r.logprobs);
  const text = tok.decode(tokens);
  const finish: Sample["finishReason"] = r.stopReason === "max_tokens" ? "length" : "stop";
  let cut = -1;
  for (const s of stop) {
    const at = s.length > 0 ? text.indexOf(s) : -1;
    if (at >= 0 && (cut < 0 || at < cut)) cut = at;
  }
  if (cut < 0) return { promptIndex: r.promptIndex, tokens, logprobs, text, finishReason: finish };
  // The shortest token prefix whose text holds a stop string: the token that completed it is kept.
  let k = 1;
  while (k < tokens.length && !stop.some((s) => s.length > 0 && tok.decode(tokens.slice(0, k)).includes(s))) k++;
  return { promptIndex: r.promptIndex, tokens: tokens.slice(0, k), logprobs: logprobs.slice(0, k), text: text.slice(0, cut), finishReason: "stop" };
}

/** Sample `settings.n` responses to each prompt through the batcher. */
export async function generate(batcher: Batcher, tok: Tokenizer, prompts: Int32Array[], s: GenerateSettings): Promise<{ samples: Sample[]; policyVersion: number }> {
  const out = await batcher.submit(prompts, { n: s.n, temperature: s.temperature, topP: s.topP, maxNewTokens: s.maxTokens, ...(s.seed !== undefined ? { seed: s.seed } : {}) });
  return { samples: out.results.map((r) => applyStop(tok, r, s.stop)), policyVersion: out.policyVersion };
}

/** A token id as the text clients see in logprobs (special tokens kept). */
export function tokenText(tok: Tokenizer, id: number): string {
  return tok.decode([id], { skipSpecial: false });
}

/**
 * A sample's text split by token, for streaming: piece k is the text token k adds (empty for
 * tokens that add none: special tokens, a partial UTF-8 character, text past a stop string).
 * One piece per token; they join to `s.text` (the decoded tokens start with it, stop cut included).
 */
export function textPieces(tok: Tokenizer, s: Sample): string[] {
  const pieces: string[] = [];
  let sent = 0;
  for (let k = 0; k < s.tokens.length; k++) {
    const upto = Math.max(sent, Math.min(s.text.length, tok.decode(s.tokens.slice(0, k + 1)).length));
    pieces.push(s.text.slice(sent, upto));
    sent = upto;
  }
  return pieces;
}
