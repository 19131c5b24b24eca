/**
 * Any Hugging Face tokenizer (`tokenizer.json` + `tokenizer_config.json`), run by
 * `@huggingface/tokenizers` (a JS port of the Rust `tokenizers` library), with chat templates
 * rendered by `@huggingface/jinja`. Both engines tokenize through this class, so they see the
 * same ids.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer as HfJsTokenizer } from "@huggingface/tokenizers";
import type { Tokenizer } from "./types.ts";
import { renderChatTemplate, plainChat, pickChatTemplate, type ChatMessage } from "./chat.ts";

/** Where a tokenizer came from, for error messages and `save`. */
export interface HfTokenizerFiles {
  /** Parsed tokenizer.json. */
  tokenizerJson: Record<string, unknown>;
  /** Parsed tokenizer_config.json ({} when absent). */
  tokenizerConfig: Record<string, unknown>;
  /** Parsed special_tokens_map.json, consulted when tokenizer_config lacks a token. */
  specialTokensMap?: Record<string, unknown>;
  /** The chat template from a separate chat_template.jinja / chat_template.json, if any. */
  chatTemplateFile?: string | null;
  /** Directory (or label) shown in errors. */
  where?: string;
}

/** The files of a Hugging Face tokenizer directory that `HfTokenizer.load` / `fromFiles` read. */
export const HF_TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja", "chat_template.json"] as const;

/** tokenizer_config values are a string, an AddedToken-like {content}, or null. */
function tokenString(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (v && typeof v === "object" && typeof (v as { content?: unknown }).content === "string") return (v as { content: string }).content;
  return null;
}

export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosId: number;
  readonly bosId: number | null;
  readonly padId: number;
  readonly unkId: number | null;
  /** Special-token strings as the chat template sees them. */
  readonly bosToken: string | null;
  readonly eosToken: string;
  readonly padToken: string | null;
  readonly unkToken: string | null;
  /** The chat template in use, or null (then chats render as "role: content" lines). */
  readonly chatTemplate: string | null;
  /** Ids of special tokens (dropped by decode unless skipSpecial is false). */
  readonly specialIds: ReadonlySet<number>;
  private readonly tk: HfJsTokenizer;
  private readonly files: HfTokenizerFiles;
  private readonly vocab: (string | undefined)[];
  private readonly cleanUpSpaces: boolean;

  /**
   * Build from parsed files. Token roles come from tokenizer_config.json (`bos_token`,
   * `eos_token`, `pad_token`, `unk_token`, each a string or {content}), falling back to
   * special_tokens_map.json; their ids are looked up in the vocabulary, then in
   * `added_tokens_decoder`. pad falls back to eos. vocabSize is the largest id + 1.
   * @throws naming the file and field when there is no eos_token or a named token is not in the
   *   vocabulary, or when `@huggingface/tokenizers` rejects tokenizer.json.
   */
  constructor(files: HfTokenizerFiles) {
    this.files = files;
    const where = files.where ?? "<memory>";
    const cfgFile = `${where}/tokenizer_config.json`;
    try {
      this.tk = new HfJsTokenizer(files.tokenizerJson, files.tokenizerConfig);
    } catch (e) {
      throw new Error(`tokenizer error in ${where}/tokenizer.json: @huggingface/tokenizers cannot load it (${(e as Error).message})`);
    }
    const vocabMap = this.tk.get_vocab(true);
    let maxId = -1;
    for (const id of vocabMap.values()) maxId = Math.max(maxId, id);
    const decoder = (files.tokenizerConfig.added_tokens_decoder ?? {}) as Record<string, unknown>;
    const extra = new Map<string, number>();
    for (const [id, t] of Object.entries(decoder)) {
      const s = tokenString(t);
      if (s !== null && Number.isInteger(Number(id))) {
        extra.set(s, Number(id));
        maxId = Math.max(maxId, Number(id));
      }
    }
    this.vocabSize = maxId + 1;
    this.vocab = new Array(this.vocabSize);
    for (const [tok, id] of vocabMap) this.vocab[id] = tok;

    const role = (field: "bos_token" | "eos_token" | "pad_token" | "unk_token"): { token: string | null; id: number | null } => {
      const raw = files.tokenizerConfig[field] ?? files.specialTokensMap?.[field] ?? null;
      const token = tokenString(raw);
      if (token === null) return { token: null, id: null };
      const id = this.tk.token_to_id(token) ?? extra.get(token);
      if (id === undefined) throw new Error(`tokenizer error in ${cfgFile} at ${field}: ${JSON.stringify(token)} is not in the vocabulary of tokenizer.json`);
      return { token, id };
    };
    const eos = role("eos_token");
    if (eos.id === null || eos.token === null) {
      throw new Error(`tokenizer error in ${cfgFile} at eos_token: missing; set eos_token to the token that ends a response (e.g. "<|im_end|>" or "<|endoftext|>")`);
    }
    const bos = role("bos_token");
    const pad = role("pad_token");
    const unk = role("unk_token");
    this.eosId = eos.id;
    this.eosToken = eos.token;
    this.bosId = bos.id;
    this.bosToken = bos.token;
    this.padId = pad.id ?? eos.id;
    this.padToken = pad.token;
    this.unkId = unk.id;
    this.unkToken = unk.token;

    const special = new Set<number>();
    for (const [id, t] of this.tk.get_added_tokens_decoder()) if (t.special) special.add(id);
    for (const [id, t] of Object.entries(decoder)) {
      if (t && typeof t === "object" && (t as { special?: unknown }).special === true) special.add(Number(id));
    }
    for (const r of [eos, bos, pad, unk]) if (r.id !== null) special.add(r.id);
    this.specialIds = special;
    // As transformers: a separate chat_template.jinja / .json wins over tokenizer_config's entry.
    this.chatTemplate = files.chatTemplateFile ?? pickChatTemplate(files.tokenizerConfig.chat_template, cfgFile) ?? null;
    // transformers ≥ 4.45 defaults to no clean-up; clean-up would rewrite "a ." to "a." in rewards.
    this.cleanUpSpaces = files.tokenizerConfig.clean_up_tokenization_spaces === true;
  }

  /**
   * Load from a directory holding tokenizer.json and (optionally) tokenizer_config.json,
   * special_tokens_map.json, chat_template.jinja or chat_template.json.
   * @throws naming the file when tokenizer.json is missing or a file is not valid JSON.
   */
  static async load(dir: string): Promise<HfTokenizer> {
    const files: Record<string, Uint8Array> = {};
    for (const name of HF_TOKENIZER_FILES) if (existsSync(join(dir, name))) files[name] = await readFile(join(dir, name));
    return HfTokenizer.fromFiles(files, dir);
  }

  /**
   * `load` from a directory's files held in memory, file name → bytes (a browser tab fetches them):
   * the same files (HF_TOKENIZER_FILES) read the same way; others are ignored.
   * @param where names the source in errors (a directory or URL)
   * @throws naming the file when tokenizer.json is missing or a file is not valid JSON.
   */
  static fromFiles(files: Readonly<Record<string, Uint8Array>>, where = "<memory>"): HfTokenizer {
    const text = (name: string): string | undefined => (files[name] ? new TextDecoder().decode(files[name]) : undefined);
    const readJson = (name: string, required: boolean): Record<string, unknown> | undefined => {
      const t = text(name);
      if (t === undefined) {
        if (required) throw new Error(`tokenizer error: ${where}/${name} not found; a Hugging Face tokenizer directory needs tokenizer.json`);
        return undefined;
      }
      try {
        return JSON.parse(t);
      } catch (e) {
        throw new Error(`tokenizer error in ${where}/${name}: not valid JSON (${(e as Error).message})`);
      }
    };
    const tokenizerJson = readJson("tokenizer.json", true)!;
    const tokenizerConfig = readJson("tokenizer_config.json", false) ?? {};
    const specialTokensMap = readJson("special_tokens_map.json", false);
    let chatTemplateFile = text("chat_template.jinja") ?? null;
    if (chatTemplateFile === null) {
      const ct = readJson("chat_template.json", false);
      if (ct) chatTemplateFile = pickChatTemplate(ct.chat_template, `${where}/chat_template.json`);
    }
    return new HfTokenizer({ tokenizerJson, tokenizerConfig, specialTokensMap, chatTemplateFile, where });
  }

  /**
   * Text to ids with the tokenizer's normalizer, pre-tokenizer and model; special-token strings in
   * the text map to their ids. With `addSpecialTokens` (default true) tokenizer.json's
   * post-processor adds its special tokens, as transformers' `add_special_tokens=True` does (e.g.
   * nothing for SmolLM2, `<s>` first for Llama 2). As in transformers 5, tokenizer_config's
   * `add_bos_token` / `add_eos_token` do not change this when tokenizer.json exists (it always does here).
   */
  encode(text: string, opts: { addSpecialTokens?: boolean } = {}): number[] {
    const add = opts.addSpecialTokens ?? true;
    if (text.length === 0 && !add) return [];
    return this.tk.encode(text, { add_special_tokens: add }).ids;
  }

  /**
   * Ids to text through the tokenizer's decoder. Special tokens are dropped when `skipSpecial`
   * (default true). Ids below vocabSize that have no token (padded vocabularies) decode to "".
   * @throws RangeError for an id that is not an integer in [0, vocabSize).
   */
  decode(ids: ArrayLike<number>, opts: { skipSpecial?: boolean } = {}): string {
    const skip = opts.skipSpecial ?? true;
    const keep: number[] = [];
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k]!;
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) throw new RangeError(`tokenizer: id ${id} at position ${k} is outside [0, ${this.vocabSize})`);
      if (this.vocab[id] === undefined) continue;
      if (skip && this.specialIds.has(id)) continue;
      keep.push(id);
    }
    if (keep.length === 0) return "";
    return this.tk.decode(keep, { skip_special_tokens: false, clean_up_tokenization_spaces: this.cleanUpSpaces });
  }

  /** The id of a token string (vocabulary or added token), or undefined. */
  tokenToId(token: string): number | undefined {
    return this.tk.token_to_id(token);
  }

  /** The token string of an id, or undefined. */
  idToToken(id: number): string | undefined {
    return this.vocab[id];
  }

  /**
   * Render a chat through the tokenizer's chat template (with bos_token, eos_token, pad_token,
   * unk_token set from tokenizer_config), as transformers' `apply_chat_template(..., tokenize=False)`.
   * Without a template: "role: content" lines, then "assistant: ".
   * @param opts.addGenerationPrompt end with the assistant header (default true)
   * @param opts.extra more template variables (e.g. {enable_thinking: false})
   */
  applyChatTemplate(messages: ChatMessage[], opts: { addGenerationPrompt?: boolean; extra?: Record<string, unknown> } = {}): string {
    const gen = opts.addGenerationPrompt ?? true;
    if (this.chatTemplate === null) return plainChat(messages, gen);
    return renderChatTemplate(
      this.chatTemplate,
      messages,
      gen,
      { bos_token: this.bosToken, eos_token: this.eosToken, pad_token: this.padToken, unk_token: this.unkToken },
      opts.extra,
    );
  }

  /** Write tokenizer.json and tokenizer_config.json (as loaded; a template that came from a
   *  separate file is written into tokenizer_config's chat_template) into `dir`. */
  async save(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    for (const [name, text] of Object.entries(this.savedFiles())) await writeFile(join(dir, name), text);
  }

  /** tokenizer.json and tokenizer_config.json as text (what `save` writes). */
  savedFiles(): Record<string, string> {
    const cfg = { ...this.files.tokenizerConfig };
    if (this.chatTemplate !== null && (this.files.chatTemplateFile != null || cfg.chat_template === undefined)) cfg.chat_template = this.chatTemplate;
    return { "tokenizer.json": JSON.stringify(this.files.tokenizerJson) + "\n", "tokenizer_config.json": JSON.stringify(cfg, null, 2) + "\n" };
  }
}
