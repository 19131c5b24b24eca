/**
 * Child process for test/engines/jax-patch.test.ts: arrays whose size changes on every call
 * (sequence lengths of RL batches do) through jax-js's Wasm heap. jax-js 0.1.25 reuses a freed
 * block only for a request of exactly its size class, so 24 rounds of ~250 MB arrays, each 64 KiB
 * larger than the last, need 6 GiB of fresh heap and fail at the 4 GiB limit; rlvr's patch
 * merges and splits free blocks before failing. Prints one JSON line: the rounds done, the error
 * (if any), the Wasm heap's size, and a checksum of the data the last round wrote and read back.
 */
import "./wasm-memory.ts"; // before jax-js: records the Wasm heap
import { wasmHeapBytes } from "./wasm-memory.ts";
import { ensureJax } from "../../../src/engines/embedded/runtime.ts";
import { numpy as np, blockUntilReady } from "@jax-js/jax";

await ensureJax();
const base = 62 << 20; // floats: 248 MiB
let rounds = 0;
let error: string | null = null;
let check = 0;
try {
  const host = new Float32Array(base + 24 * (16 << 10));
  for (let i = 0; i < 24; i++) {
    const n = base + i * (16 << 10); // +64 KiB a round: a new size class each time
    host.fill(i + 1, 0, 4);
    const a = np.array(host.subarray(0, n)); // copied into the Wasm heap
    const b = a.ref.add(1); // two live arrays of this size, then both freed
    await blockUntilReady([a, b]);
    const head = (await b.ref.slice([0, 4]).data()) as Float32Array;
    check = head[0]! + head[3]!;
    a.dispose();
    b.dispose();
    rounds++;
  }
} catch (e) {
  error = (e as Error).message;
}
console.log(JSON.stringify({ rounds, error, heapGiB: wasmHeapBytes() / 2 ** 30, check }));
