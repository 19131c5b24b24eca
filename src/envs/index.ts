/** Environments (docs/envs.md): the Env interface, defineEnv and its registry, messageEnv. */
export type { Env, EnvDefinition, EnvEpisode, EnvGroup, EnvGroupSpec, EnvStep, InitialObservation, StopCondition } from "./types.ts";
export { defineEnv, envGroup, getEnv, hasEnv, listEnvs } from "./registry.ts";
export { messageEnv, observationText, type MessageEpisode, type MessageStep } from "./message.ts";
export { envConfigSchema, envTaskName, type EnvConfig } from "./config.ts";
export { envSlotTask, slotSpec } from "./task.ts";
