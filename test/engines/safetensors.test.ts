import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import {
  readSafetensors,
  readSafetensorsHeader,
  writeSafetensors,
  parseSafetensors,
  serializeSafetensors,
} from "../../src/engines/embedded/safetensors.ts";

async function tmp(): Promise<string> {
  return mkdtemp(join(tmpdir(), "rlvr-st-"));
}

/** Build a file by hand in the spec's byte layout: u64 LE header length, JSON, data buffer. */
function handBuilt(headerJson: string, data: number[]): Uint8Array {
  const json = new TextEncoder().encode(headerJson);
  const out = new Uint8Array(8 + json.length + data.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, json.length, true); // low 32 bits of the u64
  dv.setUint32(4, 0, true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

test("write → read round-trips names, order, shapes, values and metadata", async () => {
  const dir = await tmp();
  const path = join(dir, "model.safetensors");
  const tensors = {
    "model.embed_tokens.weight": { shape: [3, 4], data: Float32Array.from({ length: 12 }, (_, i) => i * 0.5 - 3) },
    "model.norm.weight": { shape: [4], data: new Float32Array([1, -0, Infinity, 1e-30]) },
    scalar: { shape: [], data: new Float32Array([42]) },
    empty: { shape: [0, 5], data: new Float32Array(0) },
  };
  await writeSafetensors(path, tensors, { format: "pt" });
  const got = await readSafetensors(path);
  assert.deepEqual([...got.keys()], Object.keys(tensors));
  for (const [name, t] of Object.entries(tensors)) {
    const g = got.get(name)!;
    assert.equal(g.dtype, "F32");
    assert.deepEqual(g.shape, t.shape);
    assert.deepEqual(g.data, t.data, name);
  }
  assert.ok(Object.is(got.get("model.norm.weight")!.data[1], -0));
  const header = await readSafetensorsHeader(path);
  assert.deepEqual(header.metadata, { format: "pt" });
  assert.equal(header.dataStart % 8, 0, "data buffer starts 8-byte aligned");
  // Atomic write leaves no temporary files behind.
  assert.deepEqual(await readdir(dir), ["model.safetensors"]);
  // In-memory serialization is byte-identical to the file.
  assert.deepEqual(new Uint8Array(await readFile(path)), serializeSafetensors(tensors, { format: "pt" }));
});

test("write handles Float32Array views with a byte offset", async () => {
  const path = join(await tmp(), "v.safetensors");
  const base = new Float32Array([9, 1, 2, 3, 9]);
  await writeSafetensors(path, { v: { shape: [3], data: base.subarray(1, 4) } });
  assert.deepEqual((await readSafetensors(path)).get("v")!.data, new Float32Array([1, 2, 3]));
});

test("parses a hand-built file with F32, F16 and BF16 tensors and a space-padded header", async () => {
  // F32 [2] = [1.5, -2]; F16 [2,2] = [1, -2, 0.5, 65504]; BF16 [1] = [1.5]; F16 [1] subnormal 2^-24
  const header =
    '{"__metadata__":{"k":"v"},' +
    '"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},' +
    '"h":{"dtype":"F16","shape":[2,2],"data_offsets":[8,16]},' +
    '"b":{"dtype":"BF16","shape":[1],"data_offsets":[16,18]},' +
    '"s":{"dtype":"F16","shape":[1],"data_offsets":[18,20]}}   ';
  const data = [
    0x00, 0x00, 0xc0, 0x3f, /* 1.5f */ 0x00, 0x00, 0x00, 0xc0, /* -2f */
    0x00, 0x3c, /* 1 */ 0x00, 0xc0, /* -2 */ 0x00, 0x38, /* 0.5 */ 0xff, 0x7b, /* 65504 */
    0xc0, 0x3f, /* bf16 1.5 */
    0x01, 0x00, /* f16 smallest subnormal */
  ];
  const bytes = handBuilt(header, data);
  const path = join(await tmp(), "hand.safetensors");
  await writeFile(path, bytes);
  for (const tensors of [await readSafetensors(path), parseSafetensors(bytes).tensors]) {
    assert.deepEqual(tensors.get("a"), { dtype: "F32", shape: [2], data: new Float32Array([1.5, -2]) });
    assert.deepEqual(tensors.get("h"), { dtype: "F16", shape: [2, 2], data: new Float32Array([1, -2, 0.5, 65504]) });
    assert.deepEqual(tensors.get("b"), { dtype: "BF16", shape: [1], data: new Float32Array([1.5]) });
    assert.equal(tensors.get("s")!.data[0], 2 ** -24);
    assert.equal(tensors.size, 4);
  }
  assert.deepEqual((await readSafetensorsHeader(path)).metadata, { k: "v" });
});

test("F16 infinities and NaN decode", () => {
  const bytes = handBuilt('{"x":{"dtype":"F16","shape":[3],"data_offsets":[0,6]}}', [0x00, 0x7c, 0x00, 0xfc, 0x01, 0x7e]);
  const x = parseSafetensors(bytes).tensors.get("x")!.data;
  assert.equal(x[0], Infinity);
  assert.equal(x[1], -Infinity);
  assert.ok(Number.isNaN(x[2]));
});

test("unsupported dtypes are rejected with the tensor's name", async () => {
  const bytes = handBuilt('{"ids":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}', [1, 0, 0, 0, 0, 0, 0, 0]);
  const path = join(await tmp(), "i64.safetensors");
  await writeFile(path, bytes);
  await assert.rejects(readSafetensors(path), /tensor "ids" has dtype I64; only F32, F16 and BF16/);
  assert.throws(() => parseSafetensors(bytes), /"ids" has dtype I64/);
});

test("malformed files fail with clear errors", async () => {
  assert.throws(() => parseSafetensors(new Uint8Array(4)), /shorter than the 8-byte header/);
  assert.throws(() => parseSafetensors(handBuilt("not json", [])), /not valid UTF-8 JSON/);
  assert.throws(
    () => parseSafetensors(handBuilt('{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', new Array(8).fill(0))),
    /"w": data_offsets span 8 bytes but F32 \[3\] needs 12/,
  );
  assert.throws(
    () => parseSafetensors(handBuilt('{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', [0, 0, 0, 0])),
    /past the data buffer/,
  );
  assert.throws(() => parseSafetensors(handBuilt('{"w":{"shape":[2],"data_offsets":[0,8]}}', [])), /"w": missing string field "dtype"/);
  const bad = handBuilt("{}", []);
  new DataView(bad.buffer).setUint32(0, 1000, true);
  assert.throws(() => parseSafetensors(bad), /runs past the end/);
  const path = join(await tmp(), "x.safetensors");
  await assert.rejects(writeSafetensors(path, { w: { shape: [2, 2], data: new Float32Array(3) } }), /"w" has 3 values but shape \[2,2\] needs 4/);
});

const python = spawnSync("python3", ["-c", "import safetensors, numpy"], { encoding: "utf8" });
const hasPySafetensors = python.status === 0;

test("cross-check with Python's safetensors package", { skip: hasPySafetensors ? false : "python3 with safetensors+numpy not available" }, async () => {
  const dir = await tmp();
  const ours = join(dir, "ours.safetensors");
  const theirs = join(dir, "theirs.safetensors");
  await writeSafetensors(ours, { "a.weight": { shape: [2, 3], data: new Float32Array([1, 2, 3, 4, 5, 6]) } }, { format: "pt" });
  const script = `
import sys, numpy as np
from safetensors.numpy import load_file, save_file
from safetensors import safe_open
t = load_file(sys.argv[1])
assert list(t) == ["a.weight"], list(t)
assert t["a.weight"].dtype == np.float32 and t["a.weight"].shape == (2, 3)
assert (t["a.weight"] == np.arange(1, 7, dtype=np.float32).reshape(2, 3)).all()
with safe_open(sys.argv[1], "np") as f: assert f.metadata() == {"format": "pt"}
x = np.array([[0.5, -1.25], [3.0, 1e-3]], dtype=np.float32)
save_file({"f32": x, "f16": x.astype(np.float16), "vec": np.array([7, 8, 9], dtype=np.float32)}, sys.argv[2], metadata={"m": "1"})
`;
  const r = spawnSync("python3", ["-c", script, ours, theirs], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const got = await readSafetensors(theirs);
  assert.deepEqual(got.get("f32")!.shape, [2, 2]);
  assert.deepEqual(got.get("f32")!.data, new Float32Array([0.5, -1.25, 3.0, 1e-3]));
  assert.equal(got.get("f16")!.dtype, "F16");
  assert.deepEqual(got.get("f16")!.data, new Float32Array([0.5, -1.25, 3.0, 0.0010004043579101562]));
  assert.deepEqual(got.get("vec")!.data, new Float32Array([7, 8, 9]));
  assert.deepEqual((await readSafetensorsHeader(theirs)).metadata, { m: "1" });
});
