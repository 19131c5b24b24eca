/**
 * Registry of instruction-following constraint checkers (IFEval-style, Zhou et al. 2023,
 * arXiv:2311.07911). A checker is a named pure function of (response, params) → {ok, reason}.
 * Users add their own with registerConstraint(); a constraint in data is `{type, ...params}`.
 */

/** A constraint in data: its checker name (or IFEval instruction id) and parameters. */
export interface Constraint {
  type: string;
  [param: string]: unknown;
}

export interface ConstraintOutcome {
  ok: boolean;
  reason: string;
}

export interface ConstraintChecker {
  /** Registry name, e.g. "word_count". */
  name: string;
  /** One line for docs and `--help`. */
  description: string;
  /** Also accepted under these names (e.g. the IFEval instruction ids). */
  aliases?: string[];
  /**
   * @param response model output
   * @param params   the constraint's parameters (IFEval kwarg names where one exists)
   * @throws Error with a message naming the bad parameter, when params are invalid
   */
  check(response: string, params: Record<string, unknown>): ConstraintOutcome;
}

/**
 * How constraints are counted:
 * - "ifeval": the reference IFEval implementation's rules, quirks included (default; its
 *   "strict" accuracy);
 * - "ifeval-loose": the same rules, a constraint also holding when it holds for the response
 *   without its first and/or last line, or without `*` (the reference's "loose" accuracy);
 * - "strict-words": our stricter conventions (whole-word keywords, blank-line paragraphs,
 *   script-based checks for `script`) — see docs/rewards-ifeval.md for the differences.
 */
export type IfevalMode = "ifeval" | "ifeval-loose" | "strict-words";
export const IFEVAL_MODES: readonly IfevalMode[] = ["ifeval", "ifeval-loose", "strict-words"];

/**
 * A checker's IFEval-exact rule. `strictWords` is the checker's own `check`, for parameters the
 * reference does not know (e.g. `script` on the language checker).
 */
export type ReferenceRule = (
  response: string,
  params: Record<string, unknown>,
  strictWords: (response: string, params: Record<string, unknown>) => ConstraintOutcome,
) => ConstraintOutcome;

const checkers = new Map<string, ConstraintChecker>();
const aliases = new Map<string, string>();
const referenceRules = new Map<string, ReferenceRule>();

/**
 * Register (or replace) a checker under its name and aliases. Replacing a built-in checker also
 * drops its IFEval-exact rule, so the new `check` is used in every mode.
 */
export function registerConstraint(c: ConstraintChecker): void {
  checkers.set(c.name, c);
  referenceRules.delete(c.name);
  for (const a of c.aliases ?? []) aliases.set(a, c.name);
}

/** Attach the IFEval-exact rule (mode "ifeval") to the registered checker `name`. */
export function registerReferenceRule(name: string, rule: ReferenceRule): void {
  if (!checkers.has(name)) throw new Error(`registerReferenceRule: no checker named "${name}"`);
  referenceRules.set(name, rule);
}

/** Look a checker up by name or alias; undefined when unknown. */
export function getConstraint(name: string): ConstraintChecker | undefined {
  return checkers.get(name) ?? checkers.get(aliases.get(name) ?? "");
}

/**
 * The check function a mode uses for a checker: its IFEval-exact rule in mode "ifeval" when it
 * has one, else its own `check`.
 */
export function checkFor(c: ConstraintChecker, mode: IfevalMode): ConstraintChecker["check"] {
  const rule = mode !== "strict-words" ? referenceRules.get(c.name) : undefined;
  if (!rule) return (r, p) => c.check(r, p);
  return (r, p) => rule(r, p, (rr, pp) => c.check(rr, pp));
}

/** All registered checkers, sorted by name. */
export function listConstraints(): ConstraintChecker[] {
  return [...checkers.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export type Relation = "less than" | "at most" | "at least" | "more than" | "exactly";

const RELATIONS: Record<string, Relation> = {
  "less than": "less than",
  "<": "less than",
  "at most": "at most",
  "<=": "at most",
  "at least": "at least",
  ">=": "at least",
  "more than": "more than",
  ">": "more than",
  exactly: "exactly",
  "==": "exactly",
  "=": "exactly",
};

/** Parse a relation name; throws naming the parameter when unknown. */
export function relation(v: unknown, param = "relation", fallback: Relation = "at least"): Relation {
  if (v === undefined || v === null) return fallback;
  const r = RELATIONS[String(v).trim().toLowerCase()];
  if (!r) throw new Error(`${param}: expected one of ${Object.keys(RELATIONS).join(", ")}, got ${JSON.stringify(v)}`);
  return r;
}

/** Does `value` stand in `rel` to `target`? */
export function compare(value: number, rel: Relation, target: number): boolean {
  switch (rel) {
    case "less than":
      return value < target;
    case "at most":
      return value <= target;
    case "at least":
      return value >= target;
    case "more than":
      return value > target;
    case "exactly":
      return value === target;
  }
}

/** A required numeric parameter; throws naming it when missing or not a finite number. */
export function num(params: Record<string, unknown>, key: string): number {
  const v = params[key];
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isFinite(n)) throw new Error(`${key}: expected a number, got ${JSON.stringify(v)}`);
  return n;
}

/** A required string parameter. */
export function str(params: Record<string, unknown>, key: string): string {
  const v = params[key];
  if (typeof v !== "string" || v.length === 0) throw new Error(`${key}: expected a non-empty string, got ${JSON.stringify(v)}`);
  return v;
}

/** A required list of strings (a single string is accepted as a one-element list). */
export function strList(params: Record<string, unknown>, key: string): string[] {
  const v = params[key];
  const list = typeof v === "string" ? [v] : v;
  if (!Array.isArray(list) || list.some((x) => typeof x !== "string")) {
    throw new Error(`${key}: expected a list of strings, got ${JSON.stringify(v)}`);
  }
  return list as string[];
}
