/**
 * Instruction-following verifier: check a response against a list of constraints and return the
 * fraction satisfied plus one result per constraint (IFEval, Zhou et al. 2023, arXiv:2311.07911).
 * Two counting modes (docs/rewards-ifeval.md): "ifeval" (default) reproduces the reference
 * implementation's rules; "strict-words" keeps our stricter conventions. In both, a response with
 * no letter or digit (empty, whitespace, only markdown markers or punctuation) fails every
 * constraint, so a policy cannot satisfy "no commas" or "fewer than N words" by answering nothing.
 */
import "./checkers-length.ts";
import "./checkers-content.ts";
import "./checkers-format.ts";
import "./reference/rules.ts";
import { IFEVAL_MODES, checkFor, getConstraint, listConstraints, type IfevalMode } from "./registry.ts";
import { pyStrip } from "./reference/pytext.ts";
import { gateReason, type GateOptions } from "./gate.ts";
import type { Verdict } from "../types.ts";

export {
  registerConstraint,
  registerReferenceRule,
  getConstraint,
  listConstraints,
  IFEVAL_MODES,
  type ConstraintChecker,
  type ConstraintOutcome,
  type IfevalMode,
  type ReferenceRule,
} from "./registry.ts";
export { detectLanguage, languageReady, IFEVAL_LANGUAGES } from "./reference/language.ts";
export { countSentences, sentTokenize } from "./reference/punkt.ts";
export { wordTokenize } from "./reference/word-tokenize.ts";
export { distinctTrigramShare, gateReason, gateWords, withoutMarkup, REPEAT_MIN_WORDS, type GateOptions } from "./gate.ts";
export { fromIFEval, readConstraints, ifevalExampleSchema, ConstraintDataError } from "./schema.ts";

/** Options of verifyConstraints. */
export interface ConstraintOptions {
  /** Reward 1 only when every constraint holds (default: fraction satisfied). */
  strict?: boolean;
  /** Counting rules (default "ifeval"). */
  mode?: IfevalMode;
  /** Reject degenerate responses before any constraint is checked (gate.ts): true, or its
   *  options. Default false here (the reference's scores); the `ifeval` verifier turns it on. */
  gate?: boolean | GateOptions;
}

/**
 * The reference's "loose" readings of a response: as is, without its first line, its last line
 * or both (each trimmed), and each of those with every `*` removed.
 */
export function looseVariants(response: string): string[] {
  const lines = response.split("\n");
  const cut = [response, lines.slice(1).join("\n"), lines.slice(0, -1).join("\n"), lines.slice(1, -1).join("\n")].map((s, i) => (i === 0 ? s : pyStrip(s)));
  return [...cut, ...cut.map((s) => s.replaceAll("*", ""))];
}

const CONTENT = /[\p{L}\p{N}]/u;
const FENCE = /```[\p{L}\p{N}_+-]*/gu;
/**
 * Does the response carry any letter or digit outside code-fence markers (```json counts as
 * markup)? Responses without one fail every constraint.
 */
export function hasContent(response: unknown): response is string {
  return typeof response === "string" && CONTENT.test(response.replace(FENCE, ""));
}

export type { Constraint } from "./registry.ts";
import type { Constraint } from "./registry.ts";

export interface ConstraintResult {
  type: string;
  ok: boolean;
  reason: string;
}

export interface ConstraintsVerdict extends Verdict {
  results: ConstraintResult[];
}


/**
 * Check every constraint.
 * @param response    model output
 * @param constraints list of `{type, ...params}`; unknown types and invalid parameters count as
 *                    not satisfied, with the reason saying why (they never throw)
 * @param opts.strict reward 1 only when every constraint holds (default: fraction satisfied)
 * @param opts.mode   "ifeval" (default: the reference IFEval rules), "ifeval-loose" (its loose
 *                    accuracy) or "strict-words"
 * @param opts.gate   reject degenerate responses first (every constraint then fails with the
 *                    gate's reason); default off
 * @returns reward = satisfied / total, correct = all satisfied
 * @throws Error for an unknown `mode`, and for a constraint list that is not a non-empty list
 *   (an empty one would reward any response: a data error, see schema.ts)
 */
export function verifyConstraints(response: string, constraints: Constraint[], opts: ConstraintOptions = {}): ConstraintsVerdict {
  const mode = opts.mode ?? "ifeval";
  if (!IFEVAL_MODES.includes(mode)) throw new Error(`ifeval mode: expected one of ${IFEVAL_MODES.join(", ")}, got ${JSON.stringify(opts.mode)}`);
  if (!Array.isArray(constraints) || constraints.length === 0) throw new Error(`ifeval: expected a non-empty list of constraints, got ${JSON.stringify(constraints)?.slice(0, 80)} (an empty list would reward any response)`);
  const list = constraints;
  const content = hasContent(response);
  const gated = opts.gate ? gateReason(response, list, opts.gate === true ? {} : opts.gate) : null;
  const readings = mode === "ifeval-loose" && content ? looseVariants(response).filter((v) => pyStrip(v) !== "") : [response];
  const results: ConstraintResult[] = list.map((c) => {
    const type = String(c?.type ?? "");
    const checker = getConstraint(type);
    if (!checker) {
      return { type, ok: false, reason: `unknown constraint "${type}" (known: ${listConstraints().map((x) => x.name).join(", ")})` };
    }
    if (!content) return { type, ok: false, reason: "response has no letters or digits" };
    if (gated) return { type, ok: false, reason: `gate: ${gated}` };
    try {
      const check = checkFor(checker, mode);
      let r = check(readings[0]!, c as Record<string, unknown>);
      for (let i = 1; i < readings.length && r.ok !== true; i++) {
        const alt = check(readings[i]!, c as Record<string, unknown>);
        if (alt.ok === true) r = { ok: true, reason: `${alt.reason} (loose reading ${i})` };
      }
      return { type, ok: r.ok === true, reason: r.reason };
    } catch (e) {
      return { type, ok: false, reason: `invalid parameters for ${type}: ${(e as Error).message}` };
    }
  });
  const satisfied = results.filter((r) => r.ok).length;
  const all = satisfied === results.length;
  const frac = satisfied / results.length;
  return {
    correct: all,
    reward: opts.strict ? (all ? 1 : 0) : frac,
    extracted: null,
    reason: all ? `all ${results.length} constraints satisfied` : `${satisfied}/${results.length} satisfied; failed: ${results.filter((r) => !r.ok).map((r) => r.type).join(", ")}`,
    results,
  };
}
