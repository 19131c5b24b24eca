/**
 * `rlvr/tinker`: the Tinker API on both sides. `serveTinker` serves it (the official Python SDK
 * trains a local model through it; docs/tinker.md), and `ServiceClient` / `TrainingClient` /
 * `SamplingClient` call it from TypeScript — against `rlvr tinker` or any server of the same
 * protocol (tinker 0.38). `TinkerEngine` is rlvr's engine contract on a model held by such a
 * server. The built-in losses are in `rlvr/algorithms` (`tinkerLoss`).
 */
export { serveTinker, type TinkerServer, type TinkerServerOptions } from "../tinker/server.ts";
export {
  ServiceClient,
  TrainingClient,
  SamplingClient,
  TinkerRequestError,
  type Datum,
  type ForwardBackwardOutput,
  type AdamParams,
  type SamplingParams,
  type SampleResponse,
} from "../tinker/client.ts";
export { TinkerEngine, type TinkerEngineOptions } from "../tinker/engine.ts";
export { engineLora, TINKER_LORA_ALPHA, type LoraConfig as TinkerLoraConfig } from "../tinker/state.ts";
