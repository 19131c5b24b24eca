/**
 * An env's slots as a procedural task: example `index` of a split names the group the env builds
 * for it (`meta: {env, index, split}`), so data selection (curricula, filters, the data cursor and
 * resume) draws env groups exactly as it draws prompts. The task's verifier refuses to score text:
 * an env's episodes are scored by the env, in the rollout (src/rollout/env.ts).
 */
import type { Example } from "../core/example.ts";
import type { Task } from "../tasks/types.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { envTaskName } from "./config.ts";
import type { EnvDefinition, EnvGroupSpec } from "./types.ts";

/** The task `env:<name>` of an env's slots. */
export function envSlotTask(def: EnvDefinition): Task {
  const name = envTaskName(def.name);
  return {
    name,
    difficulties: { min: 0, max: 0, default: 0, description: `slots of env "${def.name}" (no difficulty knob)` },
    generate: ({ index, split }): Example => ({ id: `${name}-${split}-${index}`, prompt: "", answer: "", task: name, meta: { env: def.name, index, split } }),
    verify: () => {
      throw new Error(`env "${def.name}" is multi-turn: its episodes are scored by the env in the rollout (src/rollout/env.ts), not by a verifier of one reply`);
    },
  };
}

/** The group spec of a slot example (inverse of the task's generate). @throws Error when it is not an env slot */
export function slotSpec(example: Example, seed: number, groupSize: number, tokenizer: Tokenizer): EnvGroupSpec {
  const m = example.meta as { index?: unknown; split?: unknown } | undefined;
  if (typeof m?.index !== "number" || (m.split !== "train" && m.split !== "test")) throw new Error(`example ${example.id} is not an env slot (meta.index and meta.split missing)`);
  return { seed, index: m.index, split: m.split, groupSize, tokenizer };
}
