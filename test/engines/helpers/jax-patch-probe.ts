/**
 * Child process for test/engines/jax-patch.test.ts: runs matmuls through jax-js's Wasm backend
 * under each setting of the rlvr patch (patches/@jax-js+jax+0.1.25.patch, `setWasmDispatch`) and
 * prints one JSON line: for every shape, whether each patched variant equals the 0.1.25 tiling
 * bit for bit, and the largest error of the plain result against a float64 reference.
 * Threads come from RLVR_THREADS (read when the engine's runtime loads).
 */
import { ensureJax, jaxThreads, wasmDispatch } from "../../../src/engines/embedded/runtime.ts";
import { numpy as np, setWasmDispatch } from "@jax-js/jax";
import { Rng } from "./tiny.ts";

await ensureJax();
if (!wasmDispatch().patched) throw new Error("jax-js is not patched (run npm install, which applies patches/)");

/** [rows M, depth K, columns N, batch B, transposed weight (x @ Wᵀ, the tied-head layout)] */
const shapes: [number, number, number, number, boolean][] = [
  [1, 64, 96, 1, false],
  [4, 576, 192, 1, false],
  [16, 576, 1536, 1, false],
  [16, 1536, 576, 1, false],
  [17, 64, 100, 1, false],
  [32, 128, 260, 1, false],
  [33, 128, 256, 1, false],
  [128, 96, 64, 1, false],
  [16, 576, 4096, 1, true],
  [8, 64, 1000, 1, true],
  [48, 64, 200, 1, true],
  [4, 16, 8, 3, false],
  [16, 64, 20, 4, false],
  [256, 192, 512, 1, false],
  [512, 64, 2000, 1, true],
];

function data(n: number, rng: Rng): Float32Array {
  return Float32Array.from({ length: n }, () => rng.normal());
}

async function matmul(x: Float32Array, w: Float32Array, [M, K, N, B, t]: (typeof shapes)[number]): Promise<Float32Array> {
  const xs = np.array(x).reshape(B > 1 ? [B, M, K] : [M, K]);
  const ws = np.array(w).reshape(t ? [N, K] : B > 1 ? [B, K, N] : [K, N]);
  const y = np.matmul(xs, t ? ws.transpose() : ws);
  return (await y.data()) as Float32Array;
}

function reference(x: Float32Array, w: Float32Array, [M, K, N, B, t]: (typeof shapes)[number]): Float64Array {
  const out = new Float64Array(B * M * N);
  for (let b = 0; b < B; b++)
    for (let m = 0; m < M; m++)
      for (let n = 0; n < N; n++) {
        let s = 0;
        for (let k = 0; k < K; k++) s += x[(b * M + m) * K + k]! * w[t ? n * K + k : (b * K + k) * N + n]!;
        out[(b * M + m) * N + n] = s;
      }
  return out;
}

const rng = new Rng(7);
const results = [];
for (const shape of shapes) {
  const [M, K, N, B, t] = shape;
  const x = data(B * M * K, rng);
  const w = data((t ? 1 : B) * K * N, rng);
  setWasmDispatch({ smallRowTile: 0, inline: false, sync: false });
  const plain = await matmul(x, w, shape);
  const variants: Record<string, boolean> = {};
  const settings = [
    ["smallRowTile", { smallRowTile: 32, inline: false, sync: false }],
    ["inline", { smallRowTile: 0, inline: true, sync: false }],
    ["both", { smallRowTile: 32, inline: true, sync: false }],
    ["sync", { smallRowTile: 0, inline: false, sync: true }],
    ["syncSmallRowTile", { smallRowTile: 32, inline: false, sync: true }],
  ] as const;
  for (const [name, s] of settings) {
    setWasmDispatch(s);
    const y = await matmul(x, w, shape);
    variants[name] = y.length === plain.length && y.every((v, i) => Object.is(v, plain[i]));
  }
  const ref = reference(x, w, shape);
  let maxErr = 0;
  for (let i = 0; i < ref.length; i++) maxErr = Math.max(maxErr, Math.abs(plain[i]! - ref[i]!) / (1 + Math.abs(ref[i]!)));
  results.push({ shape: `${B}x${M}x${K}x${N}${t ? "T" : ""}`, ...variants, maxErr });
}
setWasmDispatch({ smallRowTile: 32, inline: false, sync: false });
console.log(JSON.stringify({ threads: jaxThreads(), results }));
