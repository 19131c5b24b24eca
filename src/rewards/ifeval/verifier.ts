/**
 * The two IFEval verifiers, side by side (docs/rewards-ifeval.md):
 * - `ifeval` — the reward: the reference's counting rules behind the gate (gate.ts), which
 *   rejects degenerate responses (no words, digits or markup only, a language mismatch the
 *   reference lets through, repetition). All or nothing by default — reward 1 only when every
 *   constraint holds (IFEval's prompt-level strict accuracy, the RL reward of instruction-following
 *   RLVR work): partial credit lets a response that does nothing collect the constraints nothing
 *   can violate. Options: `mode`, `strict` (false: fraction satisfied), `gate` (false, or
 *   `{minWords, minDistinct}`).
 * - `ifeval-reference` — the reference implementation's scores, for evaluation and comparison
 *   with published numbers (no gate; only a response with no letter or digit at all fails;
 *   fraction satisfied — the instruction-level accuracy — unless `strict`).
 * Both read the constraints with readConstraints (schema.ts) and declare `ifevalExampleSchema`, so
 * a row without a non-empty list of known constraints is refused at load, naming the field.
 */
import type { Verifier } from "../registry.ts";
import { IFEVAL_MODES, verifyConstraints, type ConstraintOptions } from "./index.ts";
import { ifevalExampleSchema, readConstraints } from "./schema.ts";

type Opts = Record<string, unknown>;

/** Validate `{mode, strict, gate}` options; throws `config error at <at>.<key>: …`. */
function checkIfevalOptions(o: unknown, at: string, gateAllowed: boolean): void {
  if (o === undefined || o === null) return;
  if (typeof o !== "object" || Array.isArray(o)) throw new Error(`config error at ${at}: expected an object of options, got ${JSON.stringify(o)}`);
  for (const [k, v] of Object.entries(o as Opts)) {
    if (k === "mode" && IFEVAL_MODES.includes(v as never)) continue;
    if (k === "strict" && typeof v === "boolean") continue;
    if (k === "gate" && gateAllowed && (typeof v === "boolean" || isGate(v))) continue;
    const known = ["mode", "strict", ...(gateAllowed ? ["gate"] : [])];
    if (!known.includes(k)) throw new Error(`config error at ${at}.${k}: unknown option; options: ${known.join(", ")}`);
    const want = k === "mode" ? `one of ${IFEVAL_MODES.join(", ")}` : k === "strict" ? "true or false" : "true, false or {minWords: <integer ≥ 1>, minDistinct: <number in [0, 1]>}";
    throw new Error(`config error at ${at}.${k}: expected ${want}, got ${JSON.stringify(v)}`);
  }
}

function isGate(v: unknown): boolean {
  if (!v || typeof v !== "object" || Array.isArray(v)) return false;
  const { minWords: n, minDistinct: d } = v as { minWords?: unknown; minDistinct?: unknown };
  return Object.keys(v).every((k) => k === "minWords" || k === "minDistinct") &&
    (n === undefined || (Number.isInteger(n) && (n as number) >= 1)) &&
    (d === undefined || (typeof d === "number" && d >= 0 && d <= 1));
}

/** The verifier's options; the reward (`gate` on) defaults to all or nothing, the reference to the fraction. */
function options(o: unknown, gate: boolean): ConstraintOptions {
  const x = (o && typeof o === "object" && !Array.isArray(o) ? o : {}) as Opts;
  const strict = (x.strict as boolean | undefined) ?? gate;
  return { mode: x.mode as ConstraintOptions["mode"], strict, gate: gate ? ((x.gate ?? true) as ConstraintOptions["gate"]) : false };
}

export const ifevalVerifier: Verifier = {
  name: "ifeval",
  description: "every instruction constraint satisfied (IFEval rules, all or nothing), degenerate responses gated out (the RL reward)",
  exampleSchema: ifevalExampleSchema,
  verify: (r, e, ctx) => verifyConstraints(r, readConstraints(e), options(ctx?.options, true)),
  checkOptions: (o, at) => checkIfevalOptions(o, at, true),
};

export const ifevalReferenceVerifier: Verifier = {
  name: "ifeval-reference",
  description: "instruction constraints satisfied, the reference IFEval implementation's scores (evaluation)",
  exampleSchema: ifevalExampleSchema,
  verify: (r, e, ctx) => verifyConstraints(r, readConstraints(e), options(ctx?.options, false)),
  checkOptions: (o, at) => checkIfevalOptions(o, at, false),
};
