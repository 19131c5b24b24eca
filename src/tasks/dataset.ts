/**
 * Dataset I/O: write examples to JSONL, and load prompts with reference answers from JSONL or
 * Parquet files through field mappings and presets for common schemas.
 *
 * Presets (fields a row must have → how the reference answer is made):
 * - `generic`    — `prompt`, `answer` (as is). Rows written by `writeExamplesJsonl` (or
 *                  `rlvr data gen`) also carry `id`, `task`, `difficulty`, `meta`, `solution`,
 *                  which are restored, so procedural examples round-trip exactly.
 * - `gsm8k`      — `question`, `answer`: the reference is the text after the last `####`
 *                  (commas removed); the full answer text becomes `solution`. Task "math".
 * - `math`       — `problem`, `solution` (MATH / Hendrycks): the reference is the content of the
 *                  last `\boxed{…}`; the full solution becomes `solution`. Task "math".
 * - `deepscaler` / `orz` — `problem`, `answer` (as is). Task "math".
 *
 * `fields` overrides a preset's field names (dotted paths like `reward_model.ground_truth` reach
 * into nested objects). A prompt field that holds a chat (an array of `{role, content}`) gives the
 * last user message as the prompt and keeps the chat in `meta.messages`; a row without the prompt
 * field may hold its chat in `messages`. A row's optional `system` string goes to `meta.system`
 * (the system message of a chat that has none; src/tokenizers/prompt-templates.ts).
 *
 * Bad rows raise a `DatasetError` naming the file, line (JSONL) or row (Parquet, 1-based), field
 * and fix — or, with `onBadRow: "skip"`, are counted and skipped. A row is bad when its line is
 * not valid UTF-8 (JSONL is read as bytes and each line decoded strictly, so nothing is replaced
 * silently), is not JSON, holds a string with a lone UTF-16 surrogate (a `"\ud800"` escape)
 * anywhere, or lacks or mistypes a field (prompt: a string or a chat; answer, solution, id and
 * task: strings or numbers).
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { basename, dirname, extname } from "node:path";
import type { Example } from "../core/example.ts";

/** Which row fields hold what. Each value is a field name or a dotted path. */
export interface FieldMap {
  /** The question text (or a chat: an array of {role, content}). */
  prompt?: string;
  /** The reference answer (string or number). */
  answer?: string;
  /** A worked solution (optional). */
  solution?: string;
  /** A stable id (optional; default `<file stem>-<line or row>`). */
  id?: string;
  /** The task that owns the row (optional; default from the preset or `LoadOptions.task`). */
  task?: string;
}

/** Names of the built-in schema presets. */
export type DatasetPreset = "generic" | "gsm8k" | "math" | "deepscaler" | "orz";

/** Options for `loadDataset`. */
export interface LoadOptions {
  /** File format; default from the extension (`.parquet` → parquet, anything else → jsonl). */
  format?: "jsonl" | "parquet";
  /** Schema preset (default "generic"). */
  preset?: DatasetPreset;
  /** Field names overriding the preset's. */
  fields?: FieldMap;
  /** What to do with a malformed row: throw a DatasetError (default) or skip and count it. */
  onBadRow?: "error" | "skip";
  /** Task name for rows without a task field (default: the preset's, "dataset" for generic). */
  task?: string;
  /** Read at most this many rows (after skipping blank lines). */
  limit?: number;
  /**
   * Check each example against what its reward will read (a compiled reward's `checkExample`:
   * the verifiers' `exampleSchema`s). An issue makes the row bad — a DatasetError naming the
   * row's field, or skipped and counted under onBadRow "skip" — so it is never graded.
   * `field` is a path in the Example (`answer`, `meta.tests[0]`); it is reported as the row's field.
   */
  check?: (example: Example) => { field: string; message: string; verifier?: string } | null;
}

/** One skipped row and why. */
export interface SkippedRow {
  /** 1-based line (JSONL) or row (Parquet). */
  line: number;
  reason: string;
}

/** Result of `loadDataset`. */
export interface LoadResult {
  examples: Example[];
  /** Number of malformed rows skipped (always 0 with onBadRow "error"). */
  skipped: number;
  /** The first 100 skipped rows with their reasons. */
  skippedRows: SkippedRow[];
  /** Top-level field names seen in the rows, in first-seen order. */
  columns: string[];
}

/** A malformed dataset: the message names the file, line/row, field and the fix. */
export class DatasetError extends Error {
  readonly file: string;
  readonly line: number | null;
  readonly field: string | null;
  constructor(file: string, line: number | null, field: string | null, detail: string, unit: "line" | "row" = "line") {
    super(`dataset error at ${file}${line === null ? "" : ` ${unit} ${line}`}: ${detail}`);
    this.name = "DatasetError";
    this.file = file;
    this.line = line;
    this.field = field;
  }
}

interface PresetSpec {
  fields: Required<Pick<FieldMap, "prompt" | "answer">> & FieldMap;
  task: string;
  /** Turn the raw answer field into the reference answer; return an error detail string on failure. */
  answer: (raw: string, field: string) => { answer: string; solution?: string } | { error: string };
}

const PRESETS: Record<DatasetPreset, PresetSpec> = {
  generic: { fields: { prompt: "prompt", answer: "answer" }, task: "dataset", answer: (raw) => ({ answer: raw }) },
  gsm8k: {
    fields: { prompt: "question", answer: "answer" },
    task: "math",
    answer: (raw, field) => {
      const a = extractGsm8kAnswer(raw);
      return a === null
        ? { error: `field "${field}" has no "#### <answer>" line (preset gsm8k); use preset "generic" if it holds the bare answer` }
        : { answer: a, solution: raw };
    },
  },
  math: {
    fields: { prompt: "problem", answer: "solution" },
    task: "math",
    answer: (raw, field) => {
      const a = extractBoxed(raw);
      return a === null
        ? { error: `field "${field}" has no \\boxed{...} answer (preset math); set data.fields.answer to a field that holds the bare answer` }
        : { answer: a, solution: raw };
    },
  },
  deepscaler: { fields: { prompt: "problem", answer: "answer" }, task: "math", answer: (raw) => ({ answer: raw }) },
  orz: { fields: { prompt: "problem", answer: "answer" }, task: "math", answer: (raw) => ({ answer: raw }) },
};

/** Names of the presets, for CLI help and config validation. */
export const DATASET_PRESETS = Object.keys(PRESETS) as DatasetPreset[];

/**
 * The final answer of a GSM8K solution: the text after the last `####`, trimmed, with thousands
 * separators removed ("#### 1,234" → "1234"). Returns null when there is no `####` or nothing after it.
 */
export function extractGsm8kAnswer(text: string): string | null {
  const i = text.lastIndexOf("####");
  if (i < 0) return null;
  const a = text.slice(i + 4).trim().replace(/,(?=\d{3}\b)/g, "");
  return a === "" ? null : a;
}

/**
 * The content of the last `\boxed{…}` (or `\fbox{…}`) in a LaTeX solution, with nested braces
 * matched; also accepts `\boxed 5`. Returns null when there is none or its braces do not close.
 */
export function extractBoxed(text: string): string | null {
  const i = Math.max(text.lastIndexOf("\\boxed"), text.lastIndexOf("\\fbox"));
  if (i < 0) return null;
  let j = i + (text.startsWith("\\boxed", i) ? 6 : 5);
  if (text[j] === " ") {
    const m = /^ +([^\s$]+)/.exec(text.slice(j));
    return m ? m[1]! : null;
  }
  while (text[j] === " ") j++;
  if (text[j] !== "{") return null;
  let depth = 0;
  for (let k = j; k < text.length; k++) {
    const c = text[k];
    if (c === "\\") {
      k++; // skip escaped characters such as \{ and \}
      continue;
    }
    if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return text.slice(j + 1, k).trim();
    }
  }
  return null;
}

/** Serialise examples as JSONL text (one object per line, fixed key order, trailing newline). */
export function examplesToJsonl(examples: Iterable<Example>): string {
  let out = "";
  for (const ex of examples) {
    const row: Record<string, unknown> = { id: ex.id, prompt: ex.prompt, answer: ex.answer, task: ex.task };
    if (ex.difficulty !== undefined) row.difficulty = ex.difficulty;
    if (ex.meta !== undefined) row.meta = ex.meta;
    if (ex.solution !== undefined) row.solution = ex.solution;
    out += JSON.stringify(row) + "\n";
  }
  return out;
}

/** Write examples to a JSONL file (creating parent folders). Read them back with `loadDataset(path)`. */
export function writeExamplesJsonl(path: string, examples: Iterable<Example>): void {
  const dir = dirname(path);
  if (dir && !existsSync(dir)) mkdirSync(dir, { recursive: true });
  writeFileSync(path, examplesToJsonl(examples));
}

/** Read a (possibly dotted) field from a row: the exact key first, then the path. */
function getField(row: Record<string, unknown>, path: string): unknown {
  if (path in row) return row[path];
  let cur: unknown = row;
  for (const part of path.split(".")) {
    if (cur === null || typeof cur !== "object" || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

type RowResult = { ok: true; example: Example } | { ok: false; field: string | null; detail: string };

/** A lone UTF-16 surrogate: a high one not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The first string in `v` (keys included, depth-first) that holds a lone surrogate, as a field
 * path and the UTF-16 index of the surrogate; null when every string is well formed.
 */
function findLoneSurrogate(v: unknown, path: string): { path: string; index: number } | null {
  if (typeof v === "string") {
    const m = LONE_SURROGATE.exec(v);
    return m ? { path, index: m.index } : null;
  }
  if (v === null || typeof v !== "object") return null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const f = findLoneSurrogate(v[i], `${path}[${i}]`);
      if (f) return f;
    }
    return null;
  }
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const key = path ? `${path}.${k}` : k;
    if (LONE_SURROGATE.test(k)) return { path: key, index: LONE_SURROGATE.exec(k)!.index };
    const f = findLoneSurrogate(x, key);
    if (f) return f;
  }
  return null;
}

function scalarText(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  if (typeof v === "bigint") return String(v);
  return null;
}

/** Turn one parsed row into an Example, or say what is wrong with it (field + detail with the fix). */
function rowToExample(row: unknown, line: number, stem: string, spec: PresetSpec, opts: LoadOptions): RowResult {
  if (row === null || typeof row !== "object" || Array.isArray(row)) {
    return { ok: false, field: null, detail: `expected a JSON object, got ${describe(row)}` };
  }
  const r = row as Record<string, unknown>;
  const fields = { ...spec.fields, ...opts.fields };
  const keys = Object.keys(r).join(", ") || "none";
  const lone = findLoneSurrogate(r, "");
  if (lone) {
    const top = lone.path.split(/[.[]/)[0]!;
    return {
      ok: false,
      field: top,
      detail: `field "${lone.path}" holds a lone UTF-16 surrogate at character ${lone.index + 1} (a \\ud800-\\udfff escape without its pair), which no tokenizer can encode; fix the text, or set data.onBadRow to "skip"`,
    };
  }
  // Optional fields, when present, must be text.
  for (const [key, path] of [["solution", fields.solution ?? "solution"], ["id", fields.id ?? "id"], ["task", fields.task ?? "task"]] as const) {
    const v = getField(r, path);
    if (v === undefined || v === null || scalarText(v) !== null) continue;
    return { ok: false, field: path, detail: `field "${path}" is ${describe(v)}, expected a string or a number${path === key ? "" : ` (data.fields.${key})`}` };
  }

  // Prompt: a string, or a chat whose last user message is the prompt; a row without the prompt
  // field may hold its chat in "messages" (unless data.fields.prompt names the field).
  let promptField = fields.prompt!;
  let pv = getField(r, promptField);
  if ((pv === undefined || pv === null) && opts.fields?.prompt === undefined && r.messages !== undefined) [promptField, pv] = ["messages", r.messages];
  if (pv === undefined || pv === null) {
    return {
      ok: false,
      field: promptField,
      detail: `missing field "${promptField}" (fields: ${keys}); set data.fields.prompt to the field that holds the prompt (or give the row "messages": a chat)`,
    };
  }
  let prompt: string;
  let messages: { role: string; content: string }[] | undefined;
  if (typeof pv === "string") {
    prompt = pv;
  } else if (Array.isArray(pv) && pv.every((m) => m && typeof m === "object" && typeof m.role === "string" && typeof m.content === "string")) {
    messages = pv as { role: string; content: string }[];
    const users = messages.filter((m) => m.role === "user");
    if (users.length === 0) {
      return { ok: false, field: promptField, detail: `field "${promptField}" is a chat with no "user" message` };
    }
    prompt = users[users.length - 1]!.content;
  } else {
    return {
      ok: false,
      field: promptField,
      detail: `field "${promptField}" is ${describe(pv)}, expected a string or a chat (array of {role, content})`,
    };
  }
  // System: an optional per-row system message (used where the chat has none).
  const system = r.system;
  if (system !== undefined && system !== null && typeof system !== "string") return { ok: false, field: "system", detail: `field "system" is ${describe(system)}, expected a string` };
  if (typeof system === "string" && messages?.some((m) => m.role === "system")) {
    return { ok: false, field: "system", detail: `the row has both a "system" field and a system message in "${promptField}"; keep one` };
  }
  if (prompt.trim() === "") return { ok: false, field: promptField, detail: `field "${promptField}" is empty` };

  // Answer.
  const av = getField(r, fields.answer!);
  if (av === undefined || av === null) {
    return {
      ok: false,
      field: fields.answer!,
      detail: `missing field "${fields.answer}" (fields: ${keys}); set data.fields.answer to the field that holds the reference answer`,
    };
  }
  const raw = scalarText(av);
  if (raw === null) {
    return { ok: false, field: fields.answer!, detail: `field "${fields.answer}" is ${describe(av)}, expected a string or a number` };
  }
  const made = spec.answer(raw, fields.answer!);
  if ("error" in made) return { ok: false, field: fields.answer!, detail: made.error };
  if (made.answer.trim() === "") return { ok: false, field: fields.answer!, detail: `field "${fields.answer}" is empty` };

  const example: Example = {
    id: scalarText(getField(r, fields.id ?? "id")) ?? `${stem}-${line}`,
    prompt,
    answer: made.answer,
    task: scalarText(getField(r, fields.task ?? "task")) ?? opts.task ?? spec.task,
  };
  const difficulty = r.difficulty;
  if (typeof difficulty === "number" && Number.isFinite(difficulty)) example.difficulty = difficulty;
  const meta = r.meta;
  if (meta !== null && typeof meta === "object" && !Array.isArray(meta)) example.meta = { ...(meta as Record<string, unknown>) };
  if (messages) example.meta = { ...example.meta, messages };
  if (typeof system === "string") example.meta = { ...example.meta, system };
  const sol = fields.solution !== undefined ? scalarText(getField(r, fields.solution)) : (made.solution ?? scalarText(r.solution));
  if (sol !== null && sol !== undefined) example.solution = sol;
  const issue = opts.check?.(example);
  if (issue) {
    const field = rowField(issue.field, fields);
    const by = issue.verifier ? ` (verifier "${issue.verifier}")` : "";
    return { ok: false, field, detail: `field "${field}": ${issue.message}${by}; fix the row so the reward can grade it, or set data.onBadRow to "skip"` };
  }
  return { ok: true, example };
}

/** An Example field path (`answer`, `prompt`, `meta.tests[0]`) as the row's field under the field map. */
function rowField(path: string, fields: FieldMap): string {
  const m = /^(prompt|answer|solution|id|task)(?=$|[.[])/.exec(path);
  if (!m) return path || "(row)";
  const mapped = fields[m[1] as keyof FieldMap] ?? m[1]!;
  return mapped + path.slice(m[1]!.length);
}

/**
 * Byte offset (0-based) of the first byte that breaks UTF-8 in `b` (a truncated sequence at the
 * end counts at its first byte), or -1 when `b` is valid. Overlong forms, surrogates (ED A0..BF)
 * and code points above U+10FFFF are invalid, as in the WHATWG decoder.
 */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      const x = b[i + k];
      if (x === undefined || x < (k === 1 ? lo : 0x80) || x > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return -1;
}

/**
 * Split JSONL bytes into rows with their 1-based line numbers; blank lines are ignored. Each line
 * is decoded as strict UTF-8 (a bad byte is an error naming its column, not a silent U+FFFD).
 */
function jsonlRows(bytes: Uint8Array): { line: number; row?: unknown; error?: string }[] {
  const out: { line: number; row?: unknown; error?: string }[] = [];
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  let start = 0;
  for (let i = 0; start <= bytes.length; i++) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    const raw = bytes.subarray(start, end);
    start = end + 1;
    let s: string;
    try {
      s = decoder.decode(raw);
    } catch {
      const at = firstInvalidUtf8(raw);
      const hex = Array.from(raw.subarray(at, Math.min(raw.length, at + 4)), (x) => x.toString(16).padStart(2, "0")).join(" ");
      out.push({ line: i + 1, error: `invalid UTF-8 at byte ${at + 1} of the line (bytes ${hex}); save the file as UTF-8, or set data.onBadRow to "skip" to skip bad rows` });
      continue;
    }
    s = s.replace(/\r$/, "");
    if (s.trim() === "") continue;
    try {
      out.push({ line: i + 1, row: JSON.parse(s) });
    } catch (e) {
      out.push({ line: i + 1, error: `invalid JSON (${(e as Error).message}); fix the line, or set data.onBadRow to "skip" to skip bad rows` });
    }
  }
  return out;
}

async function parquetRows(path: string): Promise<{ line: number; row?: unknown; error?: string }[]> {
  const { asyncBufferFromFile, parquetReadObjects } = await import("hyparquet");
  const file = await asyncBufferFromFile(path);
  const rows = await parquetReadObjects({ file });
  return rows.map((row, i) => ({ line: i + 1, row }));
}

/**
 * Load a dataset of prompts and reference answers from a JSONL or Parquet file.
 * @param path file to read (`.parquet` → Parquet, anything else → JSONL, unless `opts.format`)
 * @param opts preset, field mapping, bad-row policy, default task, row limit
 * @returns the examples and the number (and first reasons) of skipped malformed rows
 * @throws DatasetError when the file is missing or unreadable, or (with onBadRow "error", the
 *   default) at the first malformed row, e.g.
 *   `dataset error at data/train.jsonl line 812: missing field "answer" (fields: question, solution); set data.fields.answer to the field that holds the reference answer`
 */
export async function loadDataset(path: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const presetName = opts.preset ?? "generic";
  const spec = PRESETS[presetName];
  if (spec === undefined) {
    throw new DatasetError(path, null, null, `unknown preset "${presetName}"; set data.preset to one of ${DATASET_PRESETS.join(", ")}`);
  }
  if (!existsSync(path)) throw new DatasetError(path, null, null, "file not found; check data.train / data.test");
  const format = opts.format ?? (extname(path).toLowerCase() === ".parquet" ? "parquet" : "jsonl");
  const unit = format === "parquet" ? "row" : "line";
  const onBad = opts.onBadRow ?? "error";

  let rows: { line: number; row?: unknown; error?: string }[];
  try {
    rows = format === "parquet" ? await parquetRows(path) : jsonlRows(readFileSync(path));
  } catch (e) {
    throw new DatasetError(path, null, null, `cannot read the file as ${format} (${(e as Error).message}); check data.train / data.test and the file extension (.jsonl or .parquet)`);
  }
  if (opts.limit !== undefined) rows = rows.slice(0, opts.limit);

  const stem = basename(path, extname(path));
  const examples: Example[] = [];
  const skippedRows: SkippedRow[] = [];
  let skipped = 0;
  const columns = new Set<string>();
  for (const r of rows) {
    if (r.row !== null && typeof r.row === "object" && !Array.isArray(r.row)) for (const k of Object.keys(r.row)) columns.add(k);
    const res: RowResult =
      r.error !== undefined
        ? { ok: false, field: null, detail: r.error }
        : rowToExample(r.row, r.line, stem, spec, opts);
    if (res.ok) {
      examples.push(res.example);
      continue;
    }
    if (onBad === "error") throw new DatasetError(path, r.line, res.field, res.detail, unit);
    skipped++;
    if (skippedRows.length < 100) skippedRows.push({ line: r.line, reason: res.detail });
  }
  return { examples, skipped, skippedRows, columns: [...columns] };
}
