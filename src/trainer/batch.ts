/** Moved to src/core/sequence.ts (the ground floor); kept as a re-export for existing imports. */
export * from "../core/sequence.ts";
