/**
 * The `methods:` block that enables methods, composed from each built-in method's options schema
 * (`<method>-options.ts` beside `<method>.ts`; zod only, so config/ runs none of the methods' code):
 *   - guided:     RAFT (raft), ReLIFT (relift), LUFFY/CHORD expert mixing (expert), KDRL (kd);
 *   - label-free: TTRL (ttrl), ETTRL's EAR (ear), EVOL-RL (evol), self-play (selfPlay);
 *   - user methods (src/methods/define.ts) under their registered names.
 * The old `guided:` / `labelfree:` blocks are aliases (METHOD_ALIASES). See docs/methods.md.
 */
import { z } from "zod";
import { earOptionsSchema } from "./ear-options.ts";
import { evolOptionsSchema } from "./evol-options.ts";
import { expertOptionsSchema } from "./expert-options.ts";
import { kdOptionsSchema } from "./kdrl-options.ts";
import { raftOptionsSchema } from "./raft-options.ts";
import { reliftOptionsSchema } from "./relift-options.ts";
import { selfPlayConfigSchema } from "./selfplay-options.ts";
import { ttrlOptionsSchema } from "./ttrl-options.ts";

/**
 * The built-in methods' blocks under `methods:`, keyed as in the old `guided:` / `labelfree:`
 * blocks (`guided.raft` is `methods.raft`, `labelfree.selfPlay` is `methods.selfPlay`).
 */
export const builtinMethodOptions = {
  raft: raftOptionsSchema,
  relift: reliftOptionsSchema,
  expert: expertOptionsSchema,
  kd: kdOptionsSchema,
  ttrl: ttrlOptionsSchema,
  ear: earOptionsSchema,
  evol: evolOptionsSchema,
  selfPlay: selfPlayConfigSchema,
} as const;

/** The old spellings: `guided.<key>` and `labelfree.<key>` mean `methods.<key>` (src/config/schema.ts maps them). */
export const METHOD_ALIASES = {
  guided: ["raft", "relift", "expert", "kd"],
  labelfree: ["ttrl", "ear", "evol", "selfPlay"],
} as const satisfies Record<string, readonly (keyof typeof builtinMethodOptions)[]>;

const builtinShape = Object.fromEntries(Object.entries(builtinMethodOptions).map(([k, s]) => [k, s.optional()])) as {
  [K in keyof typeof builtinMethodOptions]: z.ZodOptional<(typeof builtinMethodOptions)[K]>;
};

/**
 * The `methods` block of a run config: each built-in method's options under its key, and a
 * registered user method's options (any object; the method checks them) under its name.
 */
export const methodsConfigSchema = z
  .object(builtinShape)
  .catchall(z.record(z.string(), z.unknown()))
  .refine((g) => !(g.raft && (g.expert || g.kd)), { message: "methods.raft trains with its own loss (SFT on the kept responses); it cannot be combined with methods.expert or methods.kd", path: ["raft"] })
  .refine((g) => !(g.kd && g.expert?.mode === "luffy"), { message: "methods.kd scores on-policy samples with the teacher; it cannot be combined with LUFFY's expert sequences", path: ["kd"] });

export type MethodsConfig = z.output<typeof methodsConfigSchema>;

/** Each built-in method's options after parsing (defaults filled), by its key under `methods:`. */
export type BuiltinMethodOptions = { [K in keyof typeof builtinMethodOptions]: z.output<(typeof builtinMethodOptions)[K]> };

/** The old spellings as a config input (TypeScript configs): `guided: {raft, relift, expert, kd}`, `labelfree: {ttrl, ear, evol, selfPlay}`. */
export type MethodAliasesInput = {
  [A in keyof typeof METHOD_ALIASES]?: { [K in (typeof METHOD_ALIASES)[A][number]]?: z.input<(typeof builtinMethodOptions)[K]> };
};
