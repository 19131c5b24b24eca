/**
 * The tokenizer of a model directory for `rlvr tinker`. The Tinker API speaks token ids, so a
 * Hugging Face directory without tokenizer files (a model saved by `save_pretrained` alone) still
 * trains, samples and scores: its stand-in knows the vocabulary size and the EOS/BOS ids of
 * config.json (or generation_config.json) and refuses, naming the directory, what needs text
 * (stop strings, encoding, chat templates). The SDK's `get_tokenizer` needs real files.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readAdapterInfo } from "../engines/lora.ts";
import { loadTokenizer } from "../tokenizers/index.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { UserError } from "./futures.ts";

/**
 * The tokenizer of `dir` (a model, a checkpoint, or a peft adapter, whose base is tried next), or
 * the token-ids-only stand-in when neither has tokenizer.json / tokenizer_config.json.
 * @throws Error from the tokenizer loader when the files exist but are bad; UserError when
 *         config.json has no integer vocab_size
 */
export async function tinkerTokenizer(dir: string): Promise<Tokenizer> {
  const base = readAdapterInfo(dir)?.base;
  for (const d of [dir, base]) if (d && (existsSync(join(d, "tokenizer.json")) || existsSync(join(d, "tokenizer_config.json")))) return loadTokenizer(d);
  return idsOnlyTokenizer(base ?? dir);
}

/** A stand-in tokenizer from `dir`'s config.json: ids only (see the file comment). */
export function idsOnlyTokenizer(dir: string): Tokenizer {
  const read = (f: string): Record<string, unknown> => (existsSync(join(dir, f)) ? (JSON.parse(readFileSync(join(dir, f), "utf8")) as Record<string, unknown>) : {});
  const cfg = read("config.json");
  const gen = read("generation_config.json");
  const first = (v: unknown): number | null => {
    const x = Array.isArray(v) ? v[0] : v;
    return Number.isInteger(x) ? (x as number) : null;
  };
  const vocabSize = cfg["vocab_size"];
  if (!Number.isInteger(vocabSize)) throw new UserError(`${join(dir, "config.json")}: vocab_size must be an integer (the model has no tokenizer files, so the server reads the vocabulary size there)`);
  const refuse = (what: string) => (): never => {
    throw new UserError(`${what} needs a tokenizer, and ${dir} has none (no tokenizer.json); send token ids (stop as token ids), or add the tokenizer files to the model directory`);
  };
  return {
    vocabSize: vocabSize as number,
    // No EOS id anywhere: −1 never matches, so a default stop (None) samples to max_tokens.
    eosId: first(cfg["eos_token_id"]) ?? first(gen["eos_token_id"]) ?? -1,
    bosId: first(cfg["bos_token_id"]) ?? first(gen["bos_token_id"]),
    padId: first(cfg["pad_token_id"]) ?? 0,
    encode: refuse("encoding text"),
    decode: refuse("stop strings (decoding samples)"),
    applyChatTemplate: refuse("a chat template"),
    // Nothing to write beside a checkpoint: the model had no tokenizer files.
    async save() {},
  };
}
