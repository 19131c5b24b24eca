/** The tokenizer interface shared by every engine (so all engines see identical token ids). */
export interface Tokenizer {
  /** Number of token ids (may exceed the number of distinct strings, e.g. padded vocabularies). */
  readonly vocabSize: number;
  /** End-of-sequence id, appended to demonstrations and used as the default stop token. */
  readonly eosId: number;
  /** Beginning-of-sequence id prepended to prompts, or null when the model uses none. */
  readonly bosId: number | null;
  /** Padding id (any valid id; padded positions are never attended to or trained). */
  readonly padId: number;
  /** Text to ids (no special tokens added). */
  encode(text: string): number[];
  /** Ids to text; special tokens are dropped when `skipSpecial` (default true). */
  decode(ids: ArrayLike<number>, opts?: { skipSpecial?: boolean }): string;
  /**
   * Render a chat (list of {role, content}) through the model's chat template to a prompt
   * string ending where the assistant's reply begins. Tokenizers without a template use a plain
   * "role: content" layout.
   */
  applyChatTemplate(messages: { role: string; content: string }[], opts?: { addGenerationPrompt?: boolean }): string;
  /** Save in the Hugging Face layout (tokenizer.json, tokenizer_config.json) into `dir`. */
  save(dir: string): Promise<void>;
  /** The files `save` writes, as file name → text (a browser download zips them with the model). */
  savedFiles?(): Record<string, string>;
}
