/**
 * The framed binary protocol spoken with the torch engine's worker (python/rlvr_worker/protocol.py
 * is the other half; the two must change together).
 *
 * One message = `u32 LE payload length` + payload; payload = `u32 LE header length` + UTF-8 JSON
 * header + zero padding to a multiple of 8 + each tensor's raw little-endian bytes (each padded to
 * a multiple of 8), in the order of `header.tensors` = [{name, dtype: "float32" | "int32", shape}].
 * Numbers never travel as JSON arrays.
 */
import { endianness } from "node:os";

export type WireTensor = Float32Array | Int32Array;
export type WireTensors = Record<string, WireTensor>;
export type Header = Record<string, unknown>;

interface TensorSpec {
  name: string;
  dtype: "float32" | "int32";
  shape: number[];
}

/** Frames above this size are refused (the worker's limit too). */
export const MAX_MESSAGE_BYTES = 2 ** 31 - 1;

if (endianness() !== "LE") throw new Error("the torch engine's protocol assumes a little-endian host");

const pad8 = (n: number) => (8 - (n % 8)) % 8;

/** Encode one frame (length prefix included). Tensors are sent flat (shape [length]) unless `shapes` says otherwise. */
export function encodeFrame(header: Header, tensors: WireTensors = {}, shapes: Record<string, number[]> = {}): Buffer {
  const specs: TensorSpec[] = [];
  const bufs: Uint8Array[] = [];
  for (const [name, t] of Object.entries(tensors)) {
    specs.push({ name, dtype: t instanceof Float32Array ? "float32" : "int32", shape: shapes[name] ?? [t.length] });
    bufs.push(new Uint8Array(t.buffer, t.byteOffset, t.byteLength));
  }
  const head = Buffer.from(JSON.stringify({ ...header, tensors: specs }), "utf8");
  let size = 4 + head.length + pad8(4 + head.length);
  for (const b of bufs) size += b.length + pad8(b.length);
  if (size > MAX_MESSAGE_BYTES) throw new Error(`torch engine: a ${size}-byte message exceeds the 2 GiB frame limit; split the batch`);
  const out = Buffer.alloc(4 + size);
  out.writeUInt32LE(size, 0);
  out.writeUInt32LE(head.length, 4);
  head.copy(out, 8);
  let off = 8 + head.length + pad8(4 + head.length);
  for (const b of bufs) {
    out.set(b, off);
    off += b.length + pad8(b.length);
  }
  return out;
}

/** Decode one payload (without its length prefix) into header and tensors (fresh, aligned copies). */
export function decodePayload(payload: Buffer): { header: Header; tensors: WireTensors } {
  const hlen = payload.readUInt32LE(0);
  if (4 + hlen > payload.length) throw new Error(`torch engine protocol error: header length ${hlen} exceeds payload ${payload.length}`);
  const header = JSON.parse(payload.subarray(4, 4 + hlen).toString("utf8")) as Header;
  let off = 4 + hlen;
  off += pad8(off);
  const tensors: WireTensors = {};
  for (const spec of (header.tensors as TensorSpec[] | undefined) ?? []) {
    const count = spec.shape.reduce((a, b) => a * b, 1);
    const nbytes = count * 4;
    if (off + nbytes > payload.length) throw new Error(`torch engine protocol error: tensor ${spec.name} runs past the payload`);
    const arr = spec.dtype === "float32" ? new Float32Array(count) : new Int32Array(count);
    new Uint8Array(arr.buffer).set(payload.subarray(off, off + nbytes));
    tensors[spec.name] = arr;
    off += nbytes + pad8(nbytes);
  }
  delete header.tensors;
  return { header, tensors };
}

/** Incremental frame splitter for a byte stream. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private size = 0;

  /** Add bytes; returns every complete payload now available. */
  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.size += chunk.length;
    const out: Buffer[] = [];
    for (;;) {
      if (this.size < 4) break;
      const head = this.peek(4);
      const n = head.readUInt32LE(0);
      if (this.size < 4 + n) break;
      const all = this.take(4 + n);
      out.push(all.subarray(4));
    }
    return out;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0]!.length >= n) return this.chunks[0]!;
    const all = Buffer.concat(this.chunks);
    this.chunks = [all];
    return all;
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.size = rest.length;
    return out;
  }
}
