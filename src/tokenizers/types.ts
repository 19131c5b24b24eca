/** The tokenizer interface shared by every engine (so all engines see identical token ids). */
export interface Tokenizer {
  /** Number of token ids (may exceed the number of distinct strings, e.g. padded vocabularies). */
  readonly vocabSize: number;
  /** End-of-sequence id, appended to demonstrations and used as the default stop token. */
  readonly eosId: number;
  /** Beginning-of-sequence id, or null when the model has none. Whether a prompt starts with it
   *  is decided by `encode`'s special tokens (or the chat template), never by this field alone. */
  readonly bosId: number | null;
  /** Padding id (any valid id; padded positions are never attended to or trained). */
  readonly padId: number;
  /**
   * Text to ids. With `addSpecialTokens` (the default, as Hugging Face's `add_special_tokens=True`)
   * the tokenizer's own special tokens are added around the text — what a model is given as a
   * prompt (a char tokenizer prepends `<bos>`; a Hugging Face tokenizer applies its post-processor,
   * e.g. nothing for SmolLM2, `<s>` for Llama 2). Pass `{addSpecialTokens: false}` for text that
   * continues a sequence (responses, observations, a rendered chat template, which carries its own).
   */
  encode(text: string, opts?: { addSpecialTokens?: boolean }): number[];
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
