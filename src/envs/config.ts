/**
 * The run config's `env:` block (docs/envs.md): which registered env the RL step plays instead of
 * sampling a task's prompts once. `data.task` and `data.train` are exclusive with it (the env makes
 * its own episodes); `data.trainSize` / `data.testSize` still size the train and held-out slots.
 */
import { z } from "zod";

export const envConfigSchema = z.strictObject({
  /** A registered env (defineEnv; a plugin registers user envs: `plugins:`). */
  name: z.string().min(1),
  /** Most env steps (sampled turns) per episode. */
  maxTurns: z.number().int().positive().max(10_000).default(8),
  /** Most response ids (sampled + observations) per episode; default rl.maxNewTokens. */
  maxTokens: z.number().int().positive().max(1 << 20).optional(),
});

export type EnvConfig = z.output<typeof envConfigSchema>;

/** The procedural task name an env's train/test slots are drawn under (src/envs/task.ts). */
export function envTaskName(env: string): string {
  return `env:${env}`;
}
