/**
 * A character-level tokenizer for small procedural tasks (addition, Countdown, ...): one token
 * per Unicode code point of an explicit alphabet, plus four special tokens.
 *
 * Ids: 0 `<pad>`, 1 `<bos>`, 2 `<eos>`, 3 `<unk>`, then the alphabet in the order given.
 * It saves as a Hugging Face `tokenizer.json` that `tokenizers` (Rust/Python) and
 * `@huggingface/tokenizers` load back with identical ids: a BPE model with no merges (one token
 * per character), a `Split` pre-tokenizer isolating every character, no normalizer, and a `Fuse`
 * decoder (concatenation). As in Hugging Face tokenizers, the special-token strings are
 * recognised inside input text (so "<eos>" in text encodes to id 2).
 */
import { mkdir, writeFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Tokenizer } from "./types.ts";
import { renderChatTemplate, plainChat, pickChatTemplate, type ChatMessage } from "./chat.ts";

/** The special tokens, in id order. */
export const CHAR_SPECIAL_TOKENS = ["<pad>", "<bos>", "<eos>", "<unk>"] as const;

/** Key in tokenizer_config.json that marks a file written by CharTokenizer. */
export const CHAR_TOKENIZER_MARKER = "rlvr_char_tokenizer";

/** Options of a character tokenizer. */
export interface CharTokenizerOptions {
  /** The characters (code points), as a string or a list of one-code-point strings; no duplicates. */
  alphabet: string | string[];
  /** What encode does with a character outside the alphabet: throw (default) or map to `<unk>`. */
  unknown?: "error" | "unk";
  /** Optional Jinja chat template; without one, chats render as "role: content" lines. */
  chatTemplate?: string | null;
}

export class CharTokenizer implements Tokenizer {
  static readonly PAD_ID = 0;
  static readonly BOS_ID = 1;
  static readonly EOS_ID = 2;
  static readonly UNK_ID = 3;

  readonly vocabSize: number;
  readonly eosId = CharTokenizer.EOS_ID;
  readonly bosId: number | null = CharTokenizer.BOS_ID;
  readonly padId = CharTokenizer.PAD_ID;
  readonly unkId = CharTokenizer.UNK_ID;
  /** The alphabet in id order (id of alphabet[i] is 4 + i). */
  readonly alphabet: readonly string[];
  readonly unknown: "error" | "unk";
  readonly chatTemplate: string | null;
  private readonly ids = new Map<string, number>();

  /**
   * @throws when the alphabet is empty, has a duplicate, or contains a string that is not exactly
   *   one code point.
   */
  constructor(opts: CharTokenizerOptions) {
    const chars = typeof opts.alphabet === "string" ? Array.from(opts.alphabet) : [...opts.alphabet];
    if (chars.length === 0) throw new Error("char tokenizer: the alphabet is empty");
    chars.forEach((c, i) => {
      if (typeof c !== "string" || Array.from(c).length !== 1) {
        throw new Error(`char tokenizer: alphabet entry ${i} (${JSON.stringify(c)}) must be exactly one character`);
      }
      if (this.ids.has(c)) throw new Error(`char tokenizer: alphabet has ${JSON.stringify(c)} twice (entries ${this.ids.get(c)! - 4} and ${i})`);
      this.ids.set(c, CHAR_SPECIAL_TOKENS.length + i);
    });
    this.alphabet = chars;
    this.vocabSize = CHAR_SPECIAL_TOKENS.length + chars.length;
    this.unknown = opts.unknown ?? "error";
    if (this.unknown !== "error" && this.unknown !== "unk") throw new Error(`char tokenizer: unknown must be "error" or "unk", got ${JSON.stringify(this.unknown)}`);
    this.chatTemplate = opts.chatTemplate ?? null;
  }

  /**
   * Text to ids, one per character; special-token strings ("<eos>", ...) in the text become
   * their ids, as in Hugging Face tokenizers. With `addSpecialTokens` (default true) `<bos>` comes
   * first — what char models are trained on as a prompt, and what the saved tokenizer.json's
   * post-processor adds in `tokenizers`/transformers; pass false for text inside a sequence.
   * @throws on a character outside the alphabet when `unknown` is "error" (names it and its index).
   */
  encode(text: string, opts: { addSpecialTokens?: boolean } = {}): number[] {
    const out: number[] = (opts.addSpecialTokens ?? true) ? [CharTokenizer.BOS_ID] : [];
    let i = 0;
    while (i < text.length) {
      if (text.charCodeAt(i) === 0x3c /* "<" */) {
        const s = CHAR_SPECIAL_TOKENS.findIndex((t) => text.startsWith(t, i));
        if (s >= 0) {
          out.push(s);
          i += CHAR_SPECIAL_TOKENS[s]!.length;
          continue;
        }
      }
      const cp = text.codePointAt(i)!;
      const c = String.fromCodePoint(cp);
      const id = this.ids.get(c);
      if (id !== undefined) out.push(id);
      else if (this.unknown === "unk") out.push(CharTokenizer.UNK_ID);
      else {
        const hex = cp.toString(16).toUpperCase().padStart(4, "0");
        throw new Error(`char tokenizer: character ${JSON.stringify(c)} (U+${hex}) at index ${i} is not in the alphabet; add it to the alphabet or use unknown: "unk"`);
      }
      i += c.length;
    }
    return out;
  }

  /**
   * Ids to text. Special tokens are dropped when `skipSpecial` (default true), else written as
   * their strings ("<eos>").
   * @throws RangeError for an id that is not an integer in [0, vocabSize).
   */
  decode(ids: ArrayLike<number>, opts: { skipSpecial?: boolean } = {}): string {
    const skip = opts.skipSpecial ?? true;
    let s = "";
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k]!;
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) throw new RangeError(`char tokenizer: id ${id} at position ${k} is outside [0, ${this.vocabSize})`);
      if (id < CHAR_SPECIAL_TOKENS.length) {
        if (!skip) s += CHAR_SPECIAL_TOKENS[id];
      } else s += this.alphabet[id - CHAR_SPECIAL_TOKENS.length];
    }
    return s;
  }

  /** The string of one id ("<eos>" for specials). */
  idToToken(id: number): string | undefined {
    return id < CHAR_SPECIAL_TOKENS.length ? CHAR_SPECIAL_TOKENS[id] : this.alphabet[id - CHAR_SPECIAL_TOKENS.length];
  }

  /** The id of a character or special-token string, or undefined. */
  tokenToId(token: string): number | undefined {
    const s = (CHAR_SPECIAL_TOKENS as readonly string[]).indexOf(token);
    return s >= 0 ? s : this.ids.get(token);
  }

  /**
   * Render a chat with the chat template (bos_token "<bos>", eos_token "<eos>") or, without one,
   * as "role: content" lines followed by "assistant: " (addGenerationPrompt, default true).
   */
  applyChatTemplate(messages: ChatMessage[], opts: { addGenerationPrompt?: boolean } = {}): string {
    const gen = opts.addGenerationPrompt ?? true;
    if (this.chatTemplate === null) return plainChat(messages, gen);
    return renderChatTemplate(this.chatTemplate, messages, gen, { bos_token: "<bos>", eos_token: "<eos>", pad_token: "<pad>", unk_token: "<unk>" });
  }

  /** The Hugging Face `tokenizer.json` object (see the module comment for its layout). */
  toTokenizerJson(): Record<string, unknown> {
    const vocab: Record<string, number> = {};
    CHAR_SPECIAL_TOKENS.forEach((t, i) => (vocab[t] = i));
    for (const [c, id] of this.ids) vocab[c] = id;
    return {
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: CHAR_SPECIAL_TOKENS.map((content, id) => ({
        id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
      })),
      normalizer: null,
      // "[\s\S]" (any code point, newline included) reads the same in Oniguruma and JS regexes.
      pre_tokenizer: { type: "Split", pattern: { Regex: "[\\s\\S]" }, behavior: "Isolated", invert: false },
      // Prompts start with <bos> (encode's addSpecialTokens), as add_special_tokens=True gives.
      post_processor: {
        type: "TemplateProcessing",
        single: [{ SpecialToken: { id: "<bos>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
        pair: [{ SpecialToken: { id: "<bos>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
        special_tokens: { "<bos>": { id: "<bos>", ids: [CharTokenizer.BOS_ID], tokens: ["<bos>"] } },
      },
      decoder: { type: "Fuse" },
      model: {
        type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null, end_of_word_suffix: null,
        fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: [],
      },
    };
  }

  /** The Hugging Face `tokenizer_config.json` object, with the `rlvr_char_tokenizer` marker. */
  toTokenizerConfig(): Record<string, unknown> {
    const addedTokensDecoder: Record<string, unknown> = {};
    CHAR_SPECIAL_TOKENS.forEach((content, id) => {
      addedTokensDecoder[String(id)] = { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true };
    });
    return {
      tokenizer_class: "PreTrainedTokenizerFast",
      bos_token: "<bos>",
      eos_token: "<eos>",
      pad_token: "<pad>",
      unk_token: "<unk>",
      added_tokens_decoder: addedTokensDecoder,
      clean_up_tokenization_spaces: false,
      ...(this.chatTemplate !== null ? { chat_template: this.chatTemplate } : {}),
      [CHAR_TOKENIZER_MARKER]: { version: 1, unknown: this.unknown },
    };
  }

  /** Write tokenizer.json and tokenizer_config.json into `dir` (created if missing). */
  async save(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    for (const [name, text] of Object.entries(this.savedFiles())) await writeFile(join(dir, name), text);
  }

  /** tokenizer.json and tokenizer_config.json as text (what `save` writes). */
  savedFiles(): Record<string, string> {
    return {
      "tokenizer.json": JSON.stringify(this.toTokenizerJson(), null, 2) + "\n",
      "tokenizer_config.json": JSON.stringify(this.toTokenizerConfig(), null, 2) + "\n",
    };
  }

  /**
   * Rebuild from the two JSON objects written by `save`.
   * @throws naming the file when the marker is missing or the vocabulary does not have the
   *   layout above (specials at 0-3, then one character per id with no gaps).
   */
  static fromJson(tokenizerJson: unknown, tokenizerConfig: unknown, where = "<memory>"): CharTokenizer {
    const cfg = (tokenizerConfig ?? {}) as Record<string, unknown>;
    const marker = cfg[CHAR_TOKENIZER_MARKER] as { version?: unknown; unknown?: unknown } | undefined;
    const cfgFile = join(where, "tokenizer_config.json");
    const tokFile = join(where, "tokenizer.json");
    if (!marker || typeof marker !== "object") throw new Error(`tokenizer error in ${cfgFile}: missing "${CHAR_TOKENIZER_MARKER}"; not a char tokenizer`);
    if (marker.version !== 1) throw new Error(`tokenizer error in ${cfgFile} at ${CHAR_TOKENIZER_MARKER}.version: expected 1, got ${JSON.stringify(marker.version)}`);
    const vocab = ((tokenizerJson ?? {}) as { model?: { vocab?: unknown } }).model?.vocab;
    if (!vocab || typeof vocab !== "object") throw new Error(`tokenizer error in ${tokFile} at model.vocab: missing`);
    const byId: string[] = [];
    for (const [tok, id] of Object.entries(vocab as Record<string, unknown>)) {
      if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || byId[id] !== undefined) {
        throw new Error(`tokenizer error in ${tokFile} at model.vocab[${JSON.stringify(tok)}]: bad or duplicate id ${JSON.stringify(id)}`);
      }
      byId[id] = tok;
    }
    CHAR_SPECIAL_TOKENS.forEach((t, i) => {
      if (byId[i] !== t) throw new Error(`tokenizer error in ${tokFile} at model.vocab: id ${i} must be ${t}, found ${JSON.stringify(byId[i])}`);
    });
    const alphabet: string[] = [];
    for (let id = CHAR_SPECIAL_TOKENS.length; id < byId.length; id++) {
      if (byId[id] === undefined) throw new Error(`tokenizer error in ${tokFile} at model.vocab: no token has id ${id}`);
      alphabet.push(byId[id]!);
    }
    const unknown = marker.unknown === "unk" ? "unk" : "error";
    return new CharTokenizer({ alphabet, unknown, chatTemplate: pickChatTemplate(cfg.chat_template, cfgFile) });
  }

  /** Load a char tokenizer saved by `save` from `dir`. */
  static async load(dir: string): Promise<CharTokenizer> {
    // One line naming the file for a missing or malformed file (not a bare SyntaxError).
    const read = async (name: string): Promise<unknown> => {
      const file = join(dir, name);
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (e) {
        throw new Error(`tokenizer error: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); a char tokenizer directory holds tokenizer.json and tokenizer_config.json`);
      }
      try {
        return JSON.parse(text);
      } catch (e) {
        throw new Error(`tokenizer error in ${file}: not valid JSON (${(e as Error).message}); restore it, or save the tokenizer again`);
      }
    };
    const tok = await read("tokenizer.json");
    const cfg = await read("tokenizer_config.json");
    return CharTokenizer.fromJson(tok, cfg, dir);
  }
}
