/**
 * Instruction-following verifier: check a response against a list of constraints and return the
 * fraction satisfied plus one result per constraint (IFEval-style, Zhou et al. 2023,
 * arXiv:2311.07911; our own implementations and counting conventions).
 */
import "./checkers-length.ts";
import "./checkers-content.ts";
import "./checkers-format.ts";
import { getConstraint, listConstraints } from "./registry.ts";
import type { Verdict } from "../types.ts";

export { registerConstraint, getConstraint, listConstraints, type ConstraintChecker, type ConstraintOutcome } from "./registry.ts";

/** A constraint in data: its checker name (or IFEval instruction id) and parameters. */
export interface Constraint {
  type: string;
  [param: string]: unknown;
}

export interface ConstraintResult {
  type: string;
  ok: boolean;
  reason: string;
}

export interface ConstraintsVerdict extends Verdict {
  results: ConstraintResult[];
}

/**
 * Convert IFEval's parallel lists (`instruction_id_list`, `kwargs`) into constraints.
 * Null kwargs values are dropped.
 */
export function fromIFEval(instructionIds: string[], kwargs: (Record<string, unknown> | null)[] = []): Constraint[] {
  return instructionIds.map((id, i) => {
    const k = Object.fromEntries(Object.entries(kwargs[i] ?? {}).filter(([, v]) => v !== null && v !== undefined));
    return { ...k, type: id };
  });
}

/**
 * Check every constraint.
 * @param response    model output
 * @param constraints list of `{type, ...params}`; unknown types and invalid parameters count as
 *                    not satisfied, with the reason saying why (they never throw)
 * @param opts.strict reward 1 only when every constraint holds (default: fraction satisfied)
 * @returns reward = satisfied / total (1 for an empty list), correct = all satisfied
 */
export function verifyConstraints(response: string, constraints: Constraint[], opts: { strict?: boolean } = {}): ConstraintsVerdict {
  const list = Array.isArray(constraints) ? constraints : [];
  const results: ConstraintResult[] = list.map((c) => {
    const type = String(c?.type ?? "");
    const checker = getConstraint(type);
    if (!checker) {
      return { type, ok: false, reason: `unknown constraint "${type}" (known: ${listConstraints().map((x) => x.name).join(", ")})` };
    }
    try {
      const r = checker.check(response, c as Record<string, unknown>);
      return { type, ok: r.ok === true, reason: r.reason };
    } catch (e) {
      return { type, ok: false, reason: `invalid parameters for ${type}: ${(e as Error).message}` };
    }
  });
  const satisfied = results.filter((r) => r.ok).length;
  const all = satisfied === results.length;
  const frac = results.length ? satisfied / results.length : 1;
  return {
    correct: all,
    reward: opts.strict ? (all ? 1 : 0) : frac,
    extracted: null,
    reason: all ? `all ${results.length} constraints satisfied` : `${satisfied}/${results.length} satisfied; failed: ${results.filter((r) => !r.ok).map((r) => r.type).join(", ")}`,
    results,
  };
}
