/**
 * Guided RL (learning beyond the model's reach): SFT utilities and RAFT, ReLIFT, LUFFY/CHORD
 * expert mixing, KDRL. Configured by the run config's `guided` block; the
 * methods themselves are objects in src/methods/; see docs/methods.md.
 */
export * from "./config.ts";
export * from "./sft.ts";
export * from "./raft.ts";
export * from "./relift.ts";
export * from "./expert.ts";
export * from "./schedule.ts";
