/**
 * Child process for test/engines/embedded-threads.test.ts: imports @jax-js/jax BEFORE the
 * engine (the wrong order for threads) and checks the engine still computes correctly, falling
 * back to one thread. Prints one JSON line.
 */
import { numpy as np } from "@jax-js/jax";
import { EmbeddedEngine } from "../../../src/engines/embedded/engine.ts";
import { jaxThreads } from "../../../src/engines/embedded/runtime.ts";
import { tinyLlama, randomBatch, Rng } from "./tiny.ts";

const engine = await EmbeddedEngine.create(tinyLlama({ hiddenSize: 64, headDim: 16, intermediateSize: 96 }), { seed: 1 });
const batch = randomBatch(new Rng(1), 11, [9, 5]);
const { logprobs } = await engine.score(batch, { model: "policy" });
const x = (await np.arange(2048).mul(2).data()) as Float32Array;
console.log(JSON.stringify({ threads: jaxThreads(), finite: logprobs.every(Number.isFinite), nonzero: logprobs.some((v) => v !== 0), x: x[2047] }));
