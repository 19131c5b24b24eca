/**
 * What an IFEval row must hold, read once for the load-time schema and for grading: the
 * constraints come from exactly one of
 * - `meta.constraints`: `[{type, ...params}]` (our form),
 * - `meta.instruction_id_list` + `meta.kwargs` (IFEval's published columns, kwargs parallel),
 * - `answer`: the constraints list as JSON (rows made by `rlvr data gen`),
 * and must be a non-empty list of known constraint types with parameters their checkers accept.
 * Anything else — an empty list, a list under another key (`meta.instructions`), an unknown type,
 * a missing or invalid parameter, kwargs of another length — is a data error naming the field,
 * never a row that grades every response 1.
 */
import { z } from "zod";
// The built-in checkers, so that the schema knows them wherever it is imported from.
import "./checkers-length.ts";
import "./checkers-content.ts";
import "./checkers-format.ts";
import "./reference/rules.ts";
import { IFEVAL_MODES, checkFor, getConstraint } from "./registry.ts";
import type { Constraint } from "./registry.ts";

/** A row's field is not what the IFEval verifier reads; `path` names it (e.g. ["meta", "constraints", 2, "type"]). */
export class ConstraintDataError extends Error {
  constructor(
    readonly path: (string | number)[],
    message: string,
  ) {
    super(`${path.join(".")}: ${message}`);
  }
}

const obj = (v: unknown): Record<string, unknown> | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/**
 * IFEval's parallel lists (`instruction_id_list`, `kwargs`) as constraints; null kwargs values are
 * dropped. `kwargs` may be missing (no parameters) but not of another length.
 * @throws ConstraintDataError when the lists do not line up
 */
export function fromIFEval(instructionIds: string[], kwargs: (Record<string, unknown> | null)[] = [], at: (string | number)[] = ["kwargs"]): Constraint[] {
  if (!Array.isArray(kwargs)) throw new ConstraintDataError(at, `expected a list (one object per instruction), got ${JSON.stringify(kwargs)}`);
  if (kwargs.length > 0 && kwargs.length !== instructionIds.length) {
    throw new ConstraintDataError(at, `${kwargs.length} entries for ${instructionIds.length} instructions; give one object (or null) per instruction_id_list entry`);
  }
  return instructionIds.map((id, i) => {
    const k = Object.fromEntries(Object.entries(obj(kwargs[i]) ?? {}).filter(([, v]) => v !== null && v !== undefined));
    return { ...k, type: id };
  });
}

/** A text every checker can read, used to try a constraint's parameters. */
const PROBE = "Hello world. This is a probe.";

/**
 * Why a constraint's parameters are invalid (its checker throws in every counting mode), or null.
 * A checker that accepts them in some mode (e.g. `start_phrase` in strict-words) passes.
 */
function badParams(c: Constraint): string | null {
  const checker = getConstraint(c.type)!;
  let why: string | null = null;
  for (const mode of IFEVAL_MODES) {
    try {
      checkFor(checker, mode)(PROBE, c);
      return null;
    } catch (e) {
      why ??= (e as Error).message;
    }
  }
  return why;
}

/** Check a constraint list: non-empty, each an object whose `type` is a known constraint with parameters its checker accepts. */
function checked(list: unknown, at: (string | number)[]): Constraint[] {
  if (!Array.isArray(list)) throw new ConstraintDataError(at, `expected a list of constraints, got ${JSON.stringify(list)?.slice(0, 80)}`);
  if (list.length === 0) throw new ConstraintDataError(at, "an empty constraint list (it would reward any response); give at least one constraint");
  list.forEach((c, i) => {
    const o = obj(c);
    if (!o) throw new ConstraintDataError([...at, i], `expected an object {type, ...params}, got ${JSON.stringify(c)?.slice(0, 80)}`);
    if (typeof o.type !== "string" || !getConstraint(o.type)) {
      throw new ConstraintDataError([...at, i, "type"], `unknown constraint ${JSON.stringify(o.type)}; see docs/rewards-ifeval.md for the known types`);
    }
    const why = badParams(o as Constraint);
    if (why) throw new ConstraintDataError([...at, i], `invalid parameters for ${o.type}: ${why}`);
  });
  return list as Constraint[];
}

/**
 * The constraints of an example (see the module comment for where they are read from).
 * @throws ConstraintDataError naming the field when there are none, or they are not valid
 */
export function readConstraints(example: { meta?: unknown; answer?: unknown }): Constraint[] {
  const m = obj(example?.meta) ?? {};
  if (m.constraints !== undefined) return checked(m.constraints, ["meta", "constraints"]);
  if (m.instruction_id_list !== undefined) {
    const ids = m.instruction_id_list;
    if (!Array.isArray(ids) || !ids.every((x) => typeof x === "string")) throw new ConstraintDataError(["meta", "instruction_id_list"], "expected a list of instruction ids (strings)");
    return checked(fromIFEval(ids, (m.kwargs ?? []) as Record<string, unknown>[], ["meta", "kwargs"]), ["meta", "instruction_id_list"]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(example?.answer ?? ""));
  } catch {
    const keys = Object.keys(m);
    throw new ConstraintDataError(["meta", "constraints"], `no constraints (looked in meta.constraints, meta.instruction_id_list and answer as JSON; meta has ${keys.length ? keys.join(", ") : "no fields"})`);
  }
  return checked(parsed, ["answer"]);
}

/** The zod schema of the example fields the IFEval verifiers read (Verifier.exampleSchema). */
export const ifevalExampleSchema = z.looseObject({ answer: z.unknown().optional(), meta: z.unknown().optional() }).superRefine((e, ctx) => {
  try {
    readConstraints(e);
  } catch (err) {
    if (!(err instanceof ConstraintDataError)) throw err;
    ctx.addIssue({ code: "custom", path: err.path, message: err.message.slice(err.path.join(".").length + 2) });
  }
});
