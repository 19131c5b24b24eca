/**
 * Native kernels, layer-by-layer LoRA training and scoring (test/engines/helpers/native.ts): the
 * cases native-kernels.test.ts leaves out of npm test — the full layout, and a head adapter
 * (whose backward stays on jax-js beside the native forward).
 */
import { describe, test } from "node:test";
import { checkLayerwiseNative, layerwiseCases, nativeSkip } from "./helpers/native.ts";

describe("native kernels, layer by layer (onnxruntime) against the jax-js path", { skip: nativeSkip }, () => {
  for (const c of layerwiseCases.filter((x) => !(x.name.endsWith("shared-prefix layout, no head adapter")))) {
    test(`layer-by-layer LoRA training and scoring: native = jax-js (${c.name}; one chunk and row chunks of 2)`, () => checkLayerwiseNative(c));
  }
});
