/** rlvr serve as a library: the server, capture mode's episode store and its trainer. */
export { serve, resolveServedCheckpoint, type ServeOptions } from "./server.ts";
export type { Server } from "./context.ts";
export { EpisodeStore, type Episode, type Turn } from "./capture.ts";
export { trainServed, episodesToSequences, type CaptureTrainOptions, type CaptureStepReport } from "./train.ts";
export { saveServed, readCaptureState, CAPTURE_STATE, type CaptureState } from "./state.ts";
export { parseToolCalls, renderToolCalls, type ToolCall } from "./tools.ts";
