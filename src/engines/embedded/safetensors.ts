/**
 * Reading and writing `.safetensors` files (the Hugging Face checkpoint format).
 *
 * Layout (https://huggingface.co/docs/safetensors, "Format"):
 *   bytes [0, 8)        N, the header length, unsigned 64-bit little-endian
 *   bytes [8, 8 + N)    UTF-8 JSON object: { "<tensor name>": { "dtype": "F32", "shape": [..],
 *                       "data_offsets": [begin, end] }, ..., "__metadata__"?: { string: string } }
 *                       (may end with trailing spaces; writers pad it so the data starts 8-aligned)
 *   bytes [8 + N, ...)  the data buffer; each tensor is row-major, little-endian, at
 *                       [begin, end) relative to the start of this buffer.
 *
 * In memory every tensor is a Float32Array: F32, F16 and BF16 are decoded on read; we always
 * write F32.
 */
import { open, rename, unlink } from "node:fs/promises";
import { dirname, basename, join } from "node:path";
import { endianness } from "node:os";
import { randomBytes } from "node:crypto";

/** Element types this module can decode. Others (I8, I64, F64, BOOL, F8_*, ...) are rejected. */
export type SafetensorsDtype = "F32" | "F16" | "BF16";

/** One decoded tensor: row-major Float32Array of `shape.reduce(*)` elements. */
export interface LoadedTensor {
  /** The dtype stored in the file (the data has already been converted to float32). */
  dtype: SafetensorsDtype;
  shape: number[];
  data: Float32Array;
}

/** One tensor to write: row-major float32 data whose length is the product of `shape`. */
export interface TensorToWrite {
  shape: number[];
  data: Float32Array;
}

/** A header entry as stored in the file (before decoding). */
export interface SafetensorsEntry {
  dtype: string;
  shape: number[];
  /** Byte range [begin, end) relative to the start of the data buffer. */
  dataOffsets: [number, number];
}

/** The parsed JSON header: entries in file order, plus the optional string-to-string metadata. */
export interface SafetensorsHeader {
  entries: Map<string, SafetensorsEntry>;
  metadata: Record<string, string>;
  /** Absolute file offset of the data buffer (8 + header length). */
  dataStart: number;
}

const BYTES_PER_ELEMENT: Record<string, number> = {
  BOOL: 1, U8: 1, I8: 1, F8_E5M2: 1, F8_E4M3: 1,
  I16: 2, U16: 2, F16: 2, BF16: 2,
  I32: 4, U32: 4, F32: 4,
  I64: 8, U64: 8, F64: 8,
};

/** Upper bound on the JSON header size, as in the reference implementation (100 MB). */
const MAX_HEADER_BYTES = 100_000_000;

if (endianness() !== "LE") {
  throw new Error("safetensors: this module assumes a little-endian host");
}

function fail(file: string, msg: string): never {
  throw new Error(`safetensors error in ${file}: ${msg}`);
}

/**
 * Parse and validate the JSON header of a safetensors file given its bytes [8, 8+N).
 * @param json      the header bytes (UTF-8)
 * @param dataBytes size of the data buffer in bytes, or null when unknown (offsets unchecked)
 * @param file      file name used in error messages
 * @throws when the JSON is malformed, an entry lacks dtype/shape/data_offsets, a shape is not a
 *   list of non-negative integers, or an entry's byte range disagrees with its dtype and shape or
 *   falls outside the data buffer.
 */
export function parseSafetensorsHeader(json: Uint8Array, dataBytes: number | null, file = "<buffer>"): SafetensorsHeader {
  let obj: unknown;
  try {
    obj = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(json));
  } catch (e) {
    fail(file, `header is not valid UTF-8 JSON (${(e as Error).message})`);
  }
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) fail(file, "header is not a JSON object");
  const entries = new Map<string, SafetensorsEntry>();
  const metadata: Record<string, string> = {};
  for (const [name, raw] of Object.entries(obj as Record<string, unknown>)) {
    if (name === "__metadata__") {
      if (typeof raw !== "object" || raw === null || Array.isArray(raw)) fail(file, "__metadata__ must be an object of strings");
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        if (typeof v !== "string") fail(file, `__metadata__.${k} must be a string, got ${JSON.stringify(v)}`);
        metadata[k] = v;
      }
      continue;
    }
    const e = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof e !== "object" || e === null) fail(file, `tensor "${name}": entry is not an object`);
    if (typeof e.dtype !== "string") fail(file, `tensor "${name}": missing string field "dtype"`);
    if (!Array.isArray(e.shape) || !e.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      fail(file, `tensor "${name}": "shape" must be a list of non-negative integers, got ${JSON.stringify(e.shape)}`);
    }
    const off = e.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((d) => Number.isSafeInteger(d) && d >= 0) || off[1] < off[0]) {
      fail(file, `tensor "${name}": "data_offsets" must be [begin, end] with 0 <= begin <= end, got ${JSON.stringify(off)}`);
    }
    const shape = e.shape as number[];
    const [begin, end] = off as [number, number];
    const size = BYTES_PER_ELEMENT[e.dtype];
    if (size !== undefined) {
      const want = shape.reduce((a, b) => a * b, 1) * size;
      if (end - begin !== want) {
        fail(file, `tensor "${name}": data_offsets span ${end - begin} bytes but ${e.dtype} ${JSON.stringify(shape)} needs ${want}`);
      }
    }
    if (dataBytes !== null && end > dataBytes) {
      fail(file, `tensor "${name}": data_offsets end ${end} is past the data buffer (${dataBytes} bytes); file truncated?`);
    }
    entries.set(name, { dtype: e.dtype, shape: [...shape], dataOffsets: [begin, end] });
  }
  return { entries, metadata, dataStart: 8 + json.length };
}

/**
 * Decode raw little-endian tensor bytes to float32.
 * @param bytes  exactly numel * bytesPerElement(dtype) bytes
 * @throws naming the tensor when the dtype is not F32, F16 or BF16.
 */
export function decodeToFloat32(name: string, dtype: string, bytes: Uint8Array, file = "<buffer>"): Float32Array {
  if (dtype === "F32") {
    const out = new Float32Array(bytes.length / 4);
    new Uint8Array(out.buffer).set(bytes);
    return out;
  }
  if (dtype === "F16" || dtype === "BF16") {
    const n = bytes.length / 2;
    const halves = new Uint16Array(n);
    new Uint8Array(halves.buffer).set(bytes);
    const out = new Float32Array(n);
    if (dtype === "BF16") {
      // bfloat16 is the top half of a float32: shift into place.
      const bits = new Uint32Array(out.buffer);
      for (let i = 0; i < n; i++) bits[i] = halves[i]! << 16;
    } else {
      for (let i = 0; i < n; i++) out[i] = halfToFloat(halves[i]!);
    }
    return out;
  }
  fail(file, `tensor "${name}" has dtype ${dtype}; only F32, F16 and BF16 can be loaded (convert the checkpoint to one of these)`);
}

/** IEEE 754 binary16 bits to a number (handles subnormals, infinities and NaN). */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/**
 * Parse a whole safetensors file held in memory.
 * @returns tensors by name in file order, each decoded to Float32Array, and the metadata.
 * @throws as `parseSafetensorsHeader` and `decodeToFloat32`, and when the buffer is too short.
 */
export function parseSafetensors(bytes: Uint8Array, file = "<buffer>"): { tensors: Map<string, LoadedTensor>; metadata: Record<string, string> } {
  if (bytes.length < 8) fail(file, `file is ${bytes.length} bytes, shorter than the 8-byte header length`);
  const n = readHeaderLength(bytes, file, bytes.length);
  const header = parseSafetensorsHeader(bytes.subarray(8, 8 + n), bytes.length - 8 - n, file);
  const tensors = new Map<string, LoadedTensor>();
  for (const [name, e] of header.entries) {
    const raw = bytes.subarray(header.dataStart + e.dataOffsets[0], header.dataStart + e.dataOffsets[1]);
    tensors.set(name, { dtype: e.dtype as SafetensorsDtype, shape: e.shape, data: decodeToFloat32(name, e.dtype, raw, file) });
  }
  return { tensors, metadata: header.metadata };
}

function readHeaderLength(first8: Uint8Array, file: string, fileSize: number): number {
  const n64 = new DataView(first8.buffer, first8.byteOffset, 8).getBigUint64(0, true);
  if (n64 > BigInt(MAX_HEADER_BYTES)) fail(file, `header length ${n64} exceeds the ${MAX_HEADER_BYTES}-byte limit; not a safetensors file?`);
  const n = Number(n64);
  if (8 + n > fileSize) fail(file, `header length ${n} runs past the end of the ${fileSize}-byte file`);
  return n;
}

/**
 * Read the header (tensor names, dtypes, shapes, offsets and `__metadata__`) without the data.
 * @throws when the file cannot be read or the header is invalid (see `parseSafetensorsHeader`).
 */
export async function readSafetensorsHeader(path: string): Promise<SafetensorsHeader> {
  const fh = await open(path, "r");
  try {
    const { size } = await fh.stat();
    if (size < 8) fail(path, `file is ${size} bytes, shorter than the 8-byte header length`);
    const first = new Uint8Array(8);
    await readExactly(fh, first, 0);
    const n = readHeaderLength(first, path, size);
    const json = new Uint8Array(n);
    await readExactly(fh, json, 8);
    return parseSafetensorsHeader(json, size - 8 - n, path);
  } finally {
    await fh.close();
  }
}

/**
 * Read every tensor of a safetensors file, decoding F32/F16/BF16 to Float32Array.
 * Tensors are read one at a time, so peak memory is about the float32 size of the model.
 * @param path  file path (e.g. `<checkpoint>/model.safetensors`)
 * @returns Map from tensor name (file order) to {dtype as stored, shape, row-major data}.
 * @throws naming the file (and tensor) for a malformed header, a truncated file, or a dtype other
 *   than F32, F16, BF16.
 */
export async function readSafetensors(path: string): Promise<Map<string, LoadedTensor>> {
  const header = await readSafetensorsHeader(path);
  const fh = await open(path, "r");
  try {
    const out = new Map<string, LoadedTensor>();
    for (const [name, e] of header.entries) {
      if (!(e.dtype === "F32" || e.dtype === "F16" || e.dtype === "BF16")) decodeToFloat32(name, e.dtype, new Uint8Array(0), path);
      const raw = new Uint8Array(e.dataOffsets[1] - e.dataOffsets[0]);
      await readExactly(fh, raw, header.dataStart + e.dataOffsets[0]);
      out.set(name, { dtype: e.dtype as SafetensorsDtype, shape: e.shape, data: decodeToFloat32(name, e.dtype, raw, path) });
    }
    return out;
  } finally {
    await fh.close();
  }
}

async function readExactly(fh: import("node:fs/promises").FileHandle, into: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < into.length) {
    const { bytesRead } = await fh.read(into, done, into.length - done, position + done);
    if (bytesRead === 0) throw new Error(`safetensors: unexpected end of file at byte ${position + done}`);
    done += bytesRead;
  }
}

/**
 * Build the header bytes (8-byte length prefix + JSON padded with spaces to a multiple of 8) for
 * tensors written as F32 in the given order, back to back from offset 0.
 * @throws when a tensor's data length is not the product of its shape, or a metadata value is not
 *   a string.
 */
export function encodeSafetensorsHeader(tensors: Record<string, TensorToWrite>, metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = {};
  if (metadata && Object.keys(metadata).length > 0) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== "string") throw new Error(`safetensors: metadata value for "${k}" must be a string, got ${typeof v}`);
    }
    header.__metadata__ = metadata;
  }
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    if (name === "__metadata__") throw new Error(`safetensors: "__metadata__" is reserved and cannot name a tensor`);
    if (!t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw new Error(`safetensors: tensor "${name}" shape ${JSON.stringify(t.shape)} must be non-negative integers`);
    }
    const numel = t.shape.reduce((a, b) => a * b, 1);
    if (t.data.length !== numel) {
      throw new Error(`safetensors: tensor "${name}" has ${t.data.length} values but shape ${JSON.stringify(t.shape)} needs ${numel}`);
    }
    header[name] = { dtype: "F32", shape: t.shape, data_offsets: [offset, offset + numel * 4] };
    offset += numel * 4;
  }
  let json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded !== json.length) {
    const p = new Uint8Array(padded).fill(0x20);
    p.set(json);
    json = p;
  }
  const out = new Uint8Array(8 + json.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  return out;
}

/**
 * Serialize tensors to one in-memory safetensors buffer (all F32, in `Object.entries` order).
 * @throws as `encodeSafetensorsHeader`.
 */
export function serializeSafetensors(tensors: Record<string, TensorToWrite>, metadata?: Record<string, string>): Uint8Array {
  const head = encodeSafetensorsHeader(tensors, metadata);
  let total = head.length;
  for (const t of Object.values(tensors)) total += t.data.byteLength;
  const out = new Uint8Array(total);
  out.set(head);
  let at = head.length;
  for (const t of Object.values(tensors)) {
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), at);
    at += t.data.byteLength;
  }
  return out;
}

/**
 * Write tensors as an F32 safetensors file, atomically: the bytes go to a temporary file in the
 * same directory, are fsync'd, and the file is renamed over `path`, so readers never see a
 * partial checkpoint.
 * @param tensors  name → {shape, row-major Float32Array}; written in `Object.entries` order
 * @param metadata optional `__metadata__` (string values only), e.g. {format: "pt"}
 * @throws when a tensor's length disagrees with its shape, or on I/O errors (temp file removed).
 */
export async function writeSafetensors(path: string, tensors: Record<string, TensorToWrite>, metadata?: Record<string, string>): Promise<void> {
  const head = encodeSafetensorsHeader(tensors, metadata);
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const fh = await open(tmp, "w");
  try {
    await fh.write(head, 0, head.length);
    for (const t of Object.values(tensors)) {
      const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
      let done = 0;
      while (done < bytes.length) {
        const { bytesWritten } = await fh.write(bytes, done, bytes.length - done);
        done += bytesWritten;
      }
    }
    await fh.sync();
    await fh.close();
    await rename(tmp, path);
  } catch (e) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw e;
  }
}
