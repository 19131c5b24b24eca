/** Label-free RL: TTRL, ETTRL's EAR, EVOL-RL, Absolute-Zero-style self-play. See docs/methods.md. */
export * from "./config.ts";
export * from "./selfplay-config.ts";
export * from "./majority.ts";
export * from "./novelty.ts";
export * from "./ear.ts";
export * from "./selfplay.ts";
export * from "./vote.ts";
