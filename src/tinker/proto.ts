/**
 * The protobuf messages of the Tinker wire protocol that the SDK (tinker 0.38) sends or expects in
 * binary: the ForwardBackwardRequest it posts (`Content-Type: application/x-protobuf`), and the
 * ForwardBackwardOutput and SampleResponse it asks for from `retrieve_future`
 * (`Accept: application/x-protobuf`). Field numbers are those of the SDK's `tinker_public.proto`
 * (read from its compiled descriptor). Only the fields rlvr reads or writes are coded; unknown
 * fields are skipped, as protobuf requires. Tensors travel as little-endian raw bytes.
 */

/** A decoded protobuf Tensor: dense values (float32 or int64 read as numbers) and its shape. */
export interface ProtoTensor {
  dtype: "float32" | "int64" | "int32";
  values: Float64Array;
  shape: number[];
}

/** One Datum of a ForwardBackwardRequest. */
export interface ProtoDatum {
  /** Input tokens (all encoded_text chunks concatenated). */
  tokens: number[];
  lossFnInputs: Record<string, ProtoTensor>;
}

/** A decoded ForwardBackwardRequest. */
export interface ProtoForwardBackwardRequest {
  modelId: string;
  seqId: number;
  data: ProtoDatum[];
  lossFn: string;
  lossFnConfig: Record<string, number>;
  forwardOnly: boolean;
}

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array, readonly end = buf.length) {}
  more(): boolean {
    return this.pos < this.end;
  }
  varint(): number {
    let result = 0;
    let mul = 1;
    for (;;) {
      if (this.pos >= this.end) throw new Error("protobuf: truncated varint");
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
  }
  bytes(): Uint8Array {
    const n = this.varint();
    if (this.pos + n > this.end) throw new Error("protobuf: truncated length-delimited field");
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  double(): number {
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
    this.pos += 8;
    return v;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`protobuf: unsupported wire type ${wire}`);
  }
  /** Visit each field: (field number, wire type). The visitor must consume the value or call skip. */
  fields(visit: (field: number, wire: number) => void): void {
    while (this.more()) {
      const key = this.varint();
      const before = this.pos;
      visit(Math.floor(key / 8), key & 7);
      if (this.pos === before) this.skip(key & 7);
    }
  }
}

const text = new TextDecoder();
const sub = (b: Uint8Array) => new Reader(b);
/** Visit the fields of the message in `r`. */
function walk(r: Reader, visit: (f: number, w: number, r: Reader) => void): void {
  r.fields((f, w) => visit(f, w, r));
}

function decodeTensor(b: Uint8Array, name: string): ProtoTensor {
  let dense: Uint8Array | null = null;
  let sparse = false;
  let dtypeCode = 0;
  const shape: number[] = [];
  walk(sub(b), (f, w, r) => {
    if (f === 1 && w === 2) dense = r.bytes();
    else if (f === 2 && w === 2) (sparse = true), r.bytes();
    else if (f === 3 && w === 0) dtypeCode = r.varint();
    else if (f === 4 && w === 2) {
      const pr = new Reader(r.bytes());
      while (pr.more()) shape.push(pr.varint());
    } else if (f === 4 && w === 0) shape.push(r.varint());
  });
  if (sparse) throw new Error(`loss_fn_inputs.${name}: sparse CSR tensors are not supported by rlvr's Tinker server; send it dense`);
  const raw: Uint8Array = dense ?? new Uint8Array(0);
  const copy = raw.slice();
  const dv = new DataView(copy.buffer);
  let values: Float64Array;
  let dtype: ProtoTensor["dtype"];
  if (dtypeCode === 1) {
    dtype = "float32";
    values = Float64Array.from(new Float32Array(copy.buffer, 0, copy.length / 4));
  } else if (dtypeCode === 2) {
    dtype = "int64";
    values = new Float64Array(copy.length / 8);
    for (let i = 0; i < values.length; i++) values[i] = Number(dv.getBigInt64(i * 8, true));
  } else if (dtypeCode === 3) {
    dtype = "int32";
    values = Float64Array.from(new Int32Array(copy.buffer, 0, copy.length / 4));
  } else throw new Error(`loss_fn_inputs.${name}: unsupported tensor dtype code ${dtypeCode} (float32 and int64 are supported)`);
  return { dtype, values, shape };
}


function mapEntry(b: Uint8Array): [string, Uint8Array | number] {
  let key = "";
  let value: Uint8Array | number = 0;
  walk(sub(b), (f, w, r) => {
    if (f === 1 && w === 2) key = text.decode(r.bytes());
    else if (f === 2 && w === 2) value = r.bytes();
    else if (f === 2 && w === 1) value = r.double();
  });
  return [key, value];
}

function decodeDatum(b: Uint8Array, index: number): ProtoDatum {
  const tokens: number[] = [];
  const lossFnInputs: Record<string, ProtoTensor> = {};
  walk(sub(b), (f, w, r) => {
    if (f === 1 && w === 2) {
      walk(sub(r.bytes()), (cf, cw, cr) => {
        if (cf === 1 && cw === 2) {
          walk(sub(cr.bytes()), (tf, tw, tr) => {
            if (tf === 1 && tw === 2) {
              const t = tr.bytes().slice();
              tokens.push(...new Int32Array(t.buffer, 0, t.length / 4));
            }
          });
        } else if (cw === 2) throw new Error(`data[${index}].model_input: only encoded_text chunks are supported (got an image or audio chunk)`);
      });
    } else if (f === 2 && w === 2) {
      const [k, v] = mapEntry(r.bytes());
      if (v instanceof Uint8Array) lossFnInputs[k] = decodeTensor(v, k);
    }
  });
  return { tokens, lossFnInputs };
}

/** Decode a ForwardBackwardRequest body. @throws Error naming the unsupported part. */
export function decodeForwardBackwardRequest(buf: Uint8Array): ProtoForwardBackwardRequest {
  const req: ProtoForwardBackwardRequest = { modelId: "", seqId: 0, data: [], lossFn: "", lossFnConfig: {}, forwardOnly: false };
  const v2: Record<string, number> = {};
  // A Node Buffer's slice() is a view; work on a plain Uint8Array so slice() copies.
  const plain = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  walk(new Reader(plain), (f, w, r) => {
    if (f === 1 && w === 2) req.modelId = text.decode(r.bytes());
    else if (f === 2 && w === 0) req.seqId = r.varint();
    else if (f === 3 && w === 2) req.data.push(decodeDatum(r.bytes(), req.data.length));
    else if (f === 4 && w === 2) req.lossFn = text.decode(r.bytes());
    else if (f === 5 && w === 2) {
      const [k, v] = mapEntry(r.bytes());
      if (typeof v === "number") req.lossFnConfig[k] = v;
    } else if (f === 6 && w === 0) req.forwardOnly = r.varint() !== 0;
    else if (f === 7 && w === 2) {
      const [k, v] = mapEntry(r.bytes());
      if (v instanceof Uint8Array) {
        walk(sub(v), (vf, vw, vr) => {
          if (vf === 1 && vw === 1) v2[k] = vr.double();
          else if (vf === 2 && vw === 2) throw new Error(`loss_fn_config.${k}: string values are not supported`);
        });
      }
    }
  });
  Object.assign(req.lossFnConfig, v2);
  return req;
}

// ------------------------------------------------------------------ writing

class Writer {
  private parts: number[] = [];
  private chunks: Uint8Array[] = [];
  private flush(): void {
    if (this.parts.length) this.chunks.push(Uint8Array.from(this.parts));
    this.parts = [];
  }
  varint(v: number): this {
    let n = Math.floor(v);
    while (n >= 0x80) {
      this.parts.push((n % 128) | 0x80);
      n = Math.floor(n / 128);
    }
    this.parts.push(n);
    return this;
  }
  key(field: number, wire: number): this {
    return this.varint(field * 8 + wire);
  }
  bytes(field: number, b: Uint8Array): this {
    this.key(field, 2).varint(b.length);
    this.flush();
    this.chunks.push(b);
    return this;
  }
  string(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }
  uint(field: number, v: number): this {
    return this.key(field, 0).varint(v);
  }
  double(field: number, v: number): this {
    this.key(field, 1);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, v, true);
    this.flush();
    this.chunks.push(b);
    return this;
  }
  finish(): Uint8Array {
    this.flush();
    const n = this.chunks.reduce((s, c) => s + c.length, 0);
    const out = new Uint8Array(n);
    let o = 0;
    for (const c of this.chunks) out.set(c, o), (o += c.length);
    return out;
  }
}

const f32bytes = (a: ArrayLike<number>) => new Uint8Array(Float32Array.from(a).buffer);
const i32bytes = (a: ArrayLike<number>) => new Uint8Array(Int32Array.from(a).buffer);

/**
 * Encode a ForwardBackwardOutput: one ArrayRecord whose fields hold every datum's float32 arrays
 * back to back (byte offsets per datum), plus the metrics.
 * @param outputs one record per datum: field name → float32 values.
 */
export function encodeForwardBackwardOutput(outputs: Record<string, ArrayLike<number>>[], metrics: Record<string, number>): Uint8Array {
  const w = new Writer().string(1, "ArrayRecord");
  const rec = new Writer().string(1, "ArrayRecord");
  const names = outputs.length ? Object.keys(outputs[0]!) : [];
  for (const name of names) {
    const offsets = new BigInt64Array(outputs.length + 1);
    const all: number[] = [];
    outputs.forEach((o, i) => {
      all.push(...Array.from(o[name]!));
      offsets[i + 1] = BigInt(all.length * 4);
    });
    const bt = new Writer().bytes(1, f32bytes(all)).bytes(2, new Uint8Array(offsets.buffer)).uint(3, 1).finish();
    rec.bytes(2, new Writer().string(1, name).bytes(2, bt).finish());
  }
  rec.uint(3, outputs.length);
  w.bytes(2, rec.finish());
  for (const [k, v] of Object.entries(metrics)) w.bytes(3, new Writer().string(1, k).double(2, v).finish());
  return w.finish();
}

/** One sampled sequence of a SampleResponse. */
export interface ProtoSampledSequence {
  stopReason: "stop" | "length";
  tokens: ArrayLike<number>;
  logprobs: ArrayLike<number>;
}

/** Top-k log-probs per position (TopkLogprobs): row-major [length, k]; an empty cell is id 0, log-prob −99999. */
export interface ProtoTopk {
  k: number;
  length: number;
  ids: ArrayLike<number>;
  logprobs: ArrayLike<number>;
}

/** Encode a SampleResponse; `promptLogprobs` (NaN where none) when prompt log-probs were asked for, `topk` when top-k prompt log-probs were. */
export function encodeSampleResponse(sequences: ProtoSampledSequence[], promptLogprobs?: ArrayLike<number>, topk?: ProtoTopk): Uint8Array {
  const w = new Writer();
  for (const s of sequences) {
    const seq = new Writer().uint(1, s.stopReason === "length" ? 1 : 0).bytes(2, i32bytes(s.tokens)).bytes(3, f32bytes(s.logprobs)).finish();
    w.bytes(1, seq);
  }
  if (promptLogprobs) w.bytes(2, f32bytes(promptLogprobs));
  if (topk) w.bytes(3, new Writer().bytes(1, i32bytes(topk.ids)).bytes(2, f32bytes(topk.logprobs)).uint(3, topk.k).uint(4, topk.length).finish());
  return w.finish();
}

// ------------------------------------------------------------------ the client's side

/**
 * Encode a ForwardBackwardRequest as the SDK does: tokens as int32 bytes, `target_tokens` as
 * int64 and every other loss input as float32 tensors of shape [n], the config in both the
 * legacy and the v2 map.
 */
export function encodeForwardBackwardRequest(req: ProtoForwardBackwardRequest): Uint8Array {
  const w = new Writer().string(1, req.modelId).uint(2, req.seqId);
  for (const d of req.data) {
    const dw = new Writer().bytes(1, new Writer().bytes(1, new Writer().bytes(1, i32bytes(d.tokens)).finish()).finish());
    for (const [k, t] of Object.entries(d.lossFnInputs)) {
      const int = t.dtype !== "float32";
      const dense = int ? new Uint8Array(BigInt64Array.from(Array.from(t.values, (v) => BigInt(Math.round(v)))).buffer) : f32bytes(t.values);
      const shape = new Writer();
      for (const s of t.shape) shape.varint(s);
      const tensor = new Writer().bytes(1, dense).uint(3, int ? 2 : 1).bytes(4, shape.finish()).finish();
      dw.bytes(2, new Writer().string(1, k).bytes(2, tensor).finish());
    }
    w.bytes(3, dw.finish());
  }
  w.string(4, req.lossFn);
  for (const [k, v] of Object.entries(req.lossFnConfig)) w.bytes(5, new Writer().string(1, k).double(2, v).finish());
  if (req.forwardOnly) w.uint(6, 1);
  for (const [k, v] of Object.entries(req.lossFnConfig)) w.bytes(7, new Writer().string(1, k).bytes(2, new Writer().double(1, v).finish()).finish());
  return w.finish();
}

/** A decoded ForwardBackwardOutput: per datum, its float arrays by name; and the metrics. */
export interface DecodedForwardBackwardOutput {
  lossFnOutputType: string;
  outputs: Record<string, Float32Array>[];
  metrics: Record<string, number>;
}

function plain(buf: Uint8Array): Uint8Array {
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** Decode a ForwardBackwardOutput (float32 fields; other dtypes are an error naming the field). */
export function decodeForwardBackwardOutput(buf: Uint8Array): DecodedForwardBackwardOutput {
  const out: DecodedForwardBackwardOutput = { lossFnOutputType: "", outputs: [], metrics: {} };
  walk(new Reader(plain(buf)), (f, w, r) => {
    if (f === 1 && w === 2) out.lossFnOutputType = text.decode(r.bytes());
    else if (f === 3 && w === 2) {
      const [k, v] = mapEntry(r.bytes());
      if (typeof v === "number") out.metrics[k] = v;
    } else if (f === 2 && w === 2) {
      const record: Record<string, Float32Array>[] = [];
      let n = 0;
      walk(sub(r.bytes()), (rf, rw, rr) => {
        if (rf === 3 && rw === 0) n = rr.varint();
        else if (rf === 2 && rw === 2) {
          const [name, bt] = mapEntry(rr.bytes());
          if (!(bt instanceof Uint8Array)) return;
          let data = new Uint8Array(0);
          let offsets = new Uint8Array(0);
          let dtype = 0;
          walk(sub(bt), (bf, bw, br) => {
            if (bf === 1 && bw === 2) data = br.bytes().slice();
            else if (bf === 2 && bw === 2) offsets = br.bytes().slice();
            else if (bf === 3 && bw === 0) dtype = br.varint();
          });
          if (dtype !== 1) throw new Error(`ForwardBackwardOutput field ${name}: dtype code ${dtype} is not float32`);
          const offs = new BigInt64Array(offsets.buffer, 0, offsets.length / 8);
          for (let i = 0; i + 1 < offs.length; i++) {
            (record[i] ??= {})[name] = new Float32Array(data.buffer.slice(Number(offs[i]!), Number(offs[i + 1]!)));
          }
        }
      });
      for (let i = 0; i < n; i++) out.outputs.push(record[i] ?? {});
    }
  });
  return out;
}

/** A decoded SampleResponse. */
export interface DecodedSampleResponse {
  sequences: { stopReason: "stop" | "length"; tokens: number[]; logprobs: number[] | null }[];
  /** Prompt log-probs (null where none, e.g. position 0), when asked for. */
  promptLogprobs: (number | null)[] | null;
  /** Top-k prompt log-probs, when asked for: per position up to k [token id, log-prob] pairs, or null where none. */
  topkPromptLogprobs?: ([number, number][] | null)[];
}

/** The SDK's log-prob of an empty top-k cell (tinker/types/topk_logprobs.py MASK_LOGPROB). */
export const TOPK_MASK_LOGPROB = -99999;

/** A TopkLogprobs message as per-position lists (empty cells dropped; an all-empty position is null). */
function decodeTopk(r: Reader): ([number, number][] | null)[] {
  let ids = new Int32Array(0);
  let lps = new Float32Array(0);
  let k = 0;
  let length = 0;
  walk(r, (f, w, x) => {
    if (f === 1 && w === 2) ids = new Int32Array(x.bytes().slice().buffer);
    else if (f === 2 && w === 2) lps = new Float32Array(x.bytes().slice().buffer);
    else if (f === 3 && w === 0) k = x.varint();
    else if (f === 4 && w === 0) length = x.varint();
  });
  return Array.from({ length }, (_, i) => {
    const row: [number, number][] = [];
    for (let j = 0; j < k; j++) if (!(ids[i * k + j] === 0 && lps[i * k + j] === TOPK_MASK_LOGPROB)) row.push([ids[i * k + j]!, lps[i * k + j]!]);
    return row.length ? row : null;
  });
}

/** Decode a SampleResponse. */
export function decodeSampleResponse(buf: Uint8Array): DecodedSampleResponse {
  const out: DecodedSampleResponse = { sequences: [], promptLogprobs: null };
  walk(new Reader(plain(buf)), (f, w, r) => {
    if (f === 1 && w === 2) {
      const seq: DecodedSampleResponse["sequences"][number] = { stopReason: "stop", tokens: [], logprobs: null };
      walk(sub(r.bytes()), (sf, sw, sr) => {
        if (sf === 1 && sw === 0) seq.stopReason = sr.varint() === 1 ? "length" : "stop";
        else if (sf === 2 && sw === 2) seq.tokens = Array.from(new Int32Array(sr.bytes().slice().buffer));
        else if (sf === 3 && sw === 2) seq.logprobs = Array.from(new Float32Array(sr.bytes().slice().buffer));
      });
      out.sequences.push(seq);
    } else if (f === 2 && w === 2) out.promptLogprobs = Array.from(new Float32Array(r.bytes().slice().buffer), (v) => (Number.isNaN(v) ? null : v));
    else if (f === 3 && w === 2) out.topkPromptLogprobs = decodeTopk(sub(r.bytes()));
  });
  return out;
}
