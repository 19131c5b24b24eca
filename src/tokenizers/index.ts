/** Tokenizers: the shared interface, the character tokenizer, Hugging Face tokenizers, and loading. */
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Tokenizer } from "./types.ts";
import { CharTokenizer, CHAR_TOKENIZER_MARKER } from "./char.ts";
import { HfTokenizer } from "./hf.ts";

export type { Tokenizer } from "./types.ts";
export { CharTokenizer, CHAR_SPECIAL_TOKENS, CHAR_TOKENIZER_MARKER, type CharTokenizerOptions } from "./char.ts";
export { HfTokenizer, type HfTokenizerFiles } from "./hf.ts";
export { renderChatTemplate, plainChat, type ChatMessage } from "./chat.ts";
export { promptEncoder, promptIds, chatPromptIds, exampleMessages, endOfTurnId, chatTemplateOf, type PromptFormat } from "./prompt.ts";

/**
 * Load the tokenizer saved in `dir` (a checkpoint or tokenizer directory): a CharTokenizer when
 * tokenizer_config.json carries the `rlvr_char_tokenizer` marker, otherwise any Hugging Face
 * tokenizer through HfTokenizer. Both give the same ids for a char tokenizer's files; the char
 * path is faster and keeps the "error on unknown character" option.
 * @throws naming the file when tokenizer.json is missing or invalid.
 */
export async function loadTokenizer(dir: string): Promise<Tokenizer> {
  const cfgFile = join(dir, "tokenizer_config.json");
  if (existsSync(cfgFile)) {
    let cfg: Record<string, unknown>;
    try {
      cfg = JSON.parse(await readFile(cfgFile, "utf8"));
    } catch (e) {
      throw new Error(`tokenizer error in ${cfgFile}: not valid JSON (${(e as Error).message})`);
    }
    if (cfg && typeof cfg === "object" && CHAR_TOKENIZER_MARKER in cfg) return CharTokenizer.load(dir);
  }
  return HfTokenizer.load(dir);
}
