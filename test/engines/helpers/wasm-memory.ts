/**
 * Records every WebAssembly.Memory created after this module loads, so a test can watch the size
 * of jax-js's Wasm heap (all live jax-js arrays share it; it grows and never shrinks, so a leak of
 * arrays shows up as growth). Import it before anything that imports @jax-js/jax.
 */
const memories: WebAssembly.Memory[] = [];
const Original = WebAssembly.Memory;
WebAssembly.Memory = new Proxy(Original, {
  construct(target, args) {
    const m = Reflect.construct(target, args) as WebAssembly.Memory;
    memories.push(m);
    return m;
  },
});

/** Bytes of the largest Wasm memory created so far (jax-js's heap), or 0 if none was recorded. */
export function wasmHeapBytes(): number {
  let max = 0;
  for (const m of memories) max = Math.max(max, m.buffer.byteLength);
  return max;
}
