/**
 * Reward-shaping formulas the algorithm presets refer to (the DAPO preset's `overlong` block).
 * The one implementation lives in the reward layer (src/rewards/shaping/overlong.ts); this module
 * re-exports it for the algorithm library's readers.
 */
export { dapoOverlongPenalty, type OverlongOptions } from "../rewards/shaping/overlong.ts";
