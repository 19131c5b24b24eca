/**
 * The `model.init` block: the shape of a randomly initialised Llama-style model (the vocabulary
 * comes from the tokenizer). The engines own this schema; the run-config schema composes it.
 * `openEngine` validates an init here when it opens, so a partial or mistyped init fails at open
 * with the field named, never later (at save) with an undefined field.
 */
import { z } from "zod";
import { UserError } from "../util/errors.ts";

const posInt = z.number().int().positive();

export const modelInitSchema = z.strictObject({
  hiddenSize: posInt.max(65536).default(128),
  numLayers: posInt.max(1024).default(2),
  numHeads: posInt.max(1024).default(4),
  numKvHeads: posInt.max(1024).optional(),
  intermediateSize: posInt.max(1 << 20).optional(),
  maxPositionEmbeddings: posInt.max(1 << 20).default(64),
  tieWordEmbeddings: z.boolean().default(true),
  ropeTheta: z.number().positive().default(10000),
});

/** A validated init block, defaults filled in. */
export type ModelInit = z.output<typeof modelInitSchema>;
/** An init block as a config or a program writes it (fields with defaults optional). */
export type ModelInitInput = z.input<typeof modelInitSchema>;

/**
 * Validate an init block and fill in its defaults.
 * @throws UserError `config error at model.init.<field>: <problem>, got <value>` (the first problem)
 */
export function parseModelInit(init: unknown, at = "model.init"): ModelInit {
  const r = modelInitSchema.safeParse(init);
  if (r.success) return r.data;
  const i = r.error.issues[0]!;
  const path = [at, ...i.path.map(String)].join(".");
  if (i.code === "unrecognized_keys") throw new UserError(`config error at ${path}: unknown field(s) ${i.keys.join(", ")}; fields: ${Object.keys(modelInitSchema.shape).join(", ")}`);
  const value = i.path.reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Record<PropertyKey, unknown>)[k] : undefined), init);
  throw new UserError(`config error at ${path}: ${i.message}, got ${JSON.stringify(value) ?? String(value)}`);
}
