/**
 * The built-in verifiers, registered by name when this module is imported (the reward layer's
 * entry points, the pool's workers and the CLI import it). What each reads from an example:
 *
 *   exact   normalised exact match of the answer span with `answer` (or any of `meta.answers`)
 *           options: {extract?: boolean}
 *   f1      token F1 (SQuAD) of the answer span with `answer` / `meta.answers`; correct at ≥ threshold
 *           options: {extract?: boolean, threshold?: number (default 1)}
 *   choice  the chosen option label vs `answer` (a label, or an option's text); option texts from
 *           `meta.options` (or `meta.choices`), labels from `options.labels` / `meta.labels`
 *   math    math answer equivalence with `answer` (src/rewards/math); options passed to verifyMath
 *   format  the response's layout; options: {template?: "think-answer" | "<t>{answer}</t>…",
 *           allowSurrounding?: boolean, uniqueTags?: string[]} (`meta.template` overrides)
 *   ifeval  instruction constraints from `meta.constraints`, IFEval's `meta.instruction_id_list` +
 *           `meta.kwargs`, or `answer` holding the constraints as JSON (ifeval/schema.ts); options go
 *           to verifyConstraints, with the RL gate on (ifeval/gate.ts); `ifeval-reference`: the
 *           reference implementation's scores, no gate (ifeval/verifier.ts)
 *   code    program tests from `meta.tests` or `answer` as a JSON array; language from
 *           `meta.language` / `options.language` (default python); options: {scoring?: "fraction" |
 *           "all", timeoutMs?: number}
 *   majority  group-aware: 1 when the response's answer span agrees with the group's most frequent
 *           answer (TTRL's pseudo-label, arXiv:2504.16084); alone (eval), exact match with `answer`
 *   task    the example's own `task`: a registered task's verifier, else the verifier of that name
 *           (rows made by `rlvr data gen`; runs of a task named like a built-in, i.e. ifeval);
 *           registered with the procedural tasks (src/tasks/index.ts)
 *   module  a user reward function from a module (see ./user-module.ts); the reward block's
 *           `{module, export}` compiles to it
 * Every procedural task also registers its verifier under its name (src/tasks/registry.ts).
 */
import type { Example } from "../core/example.ts";
import { verifyChoice } from "./choice.ts";
import { verifyExactMatch, verifyTokenF1 } from "./exact.ts";
import { verifyFormat, type FormatOptions } from "./format.ts";
import { ifevalReferenceVerifier, ifevalVerifier } from "./ifeval/verifier.ts";
import { runCodeSpec } from "./code/run-tests.ts";
import { CODE_FORMATS, codeExampleSchema, codeFieldsOf, codeSpecOf, type CodeSpec } from "./code/formats.ts";
import { loadMath, mathExampleSchema, type MathModule } from "./math-bridge.ts";
import { hasVerifier, registerVerifier, type Verifier } from "./registry.ts";
import { answerSpan, normalizeAnswer } from "./text.ts";
import type { Verdict } from "./types.ts";
import { moduleVerifier } from "./user-module.ts";
import { choiceExampleSchema, formatExampleSchema, referenceAnswerSchema } from "./example-schema.ts";
import "./judge.ts"; // registers the model-based verifier "judge"

/**
 * The built-in verifiers' names (for messages that list verifiers before the registry fills): this
 * module registers them, but `task`, which the procedural tasks register (src/tasks/index.ts).
 */
export const BUILTIN_VERIFIERS = ["exact", "f1", "choice", "math", "format", "ifeval", "ifeval-reference", "code", "majority", "task", "module"] as const;

type Opts = Record<string, unknown>;
const opts = (o: unknown): Opts => (o && typeof o === "object" && !Array.isArray(o) ? (o as Opts) : {});
const meta = (e: Example): Opts => opts(e?.meta);
/** An example, or a bare reference answer (programmatic use: `verify(response, "C")`). */
export const asExample = (e: Example | string): Example => (typeof e === "string" || typeof e === "number" ? { id: "-", prompt: "", answer: String(e), task: "-" } : e);

/** The reference answers of an example: `meta.answers` (strings) when present, else `answer`. */
function references(e: Example): string[] {
  const many = meta(e).answers;
  if (Array.isArray(many) && many.length && many.every((a) => typeof a === "string" || typeof a === "number")) return many.map(String);
  return [String(e.answer)];
}

function checkKeys(o: unknown, at: string, known: Record<string, "boolean" | "number" | "string" | "array" | "any">): void {
  if (o === undefined || o === null) return;
  if (typeof o !== "object" || Array.isArray(o)) throw new Error(`config error at ${at}: expected an object of options, got ${Array.isArray(o) ? "an array" : typeof o}`);
  for (const [k, v] of Object.entries(o as Opts)) {
    const want = known[k];
    if (!want) throw new Error(`config error at ${at}.${k}: unknown option; options: ${Object.keys(known).join(", ") || "none"}`);
    const ok = want === "any" || (want === "array" ? Array.isArray(v) : typeof v === want);
    if (!ok) throw new Error(`config error at ${at}.${k}: expected ${want === "array" ? "a list" : `a ${want}`}, got ${JSON.stringify(v)}`);
  }
}

/** Parse a JSON list kept in `answer` (ifeval, code rows whose answer holds the spec). */
function jsonList(e: Example, what: string): unknown[] {
  let v: unknown;
  try {
    v = JSON.parse(String(e.answer));
  } catch {
    throw new Error(`example ${e.id}: no ${what} (looked in meta.${what} and answer as JSON); put the ${what} list in the row's meta.${what}`);
  }
  if (!Array.isArray(v)) throw new Error(`example ${e.id}: answer is JSON but not a list of ${what}`);
  return v;
}

const exact: Verifier = {
  name: "exact",
  description: "normalised exact match of the answer span with the reference",
  verify: (r, e, ctx) => verifyExactMatch(r, references(e), { extract: opts(ctx?.options).extract as boolean | undefined }),
  checkOptions: (o, at) => checkKeys(o, at, { extract: "boolean" }),
  exampleSchema: referenceAnswerSchema,
};

const f1: Verifier = {
  name: "f1",
  description: "token F1 of the answer span with the reference (SQuAD)",
  verify: (r, e, ctx) => {
    const o = opts(ctx?.options);
    return verifyTokenF1(r, references(e), { extract: o.extract as boolean | undefined, threshold: o.threshold as number | undefined });
  },
  checkOptions: (o, at) => checkKeys(o, at, { extract: "boolean", threshold: "number" }),
  exampleSchema: referenceAnswerSchema,
};

const choice: Verifier = {
  name: "choice",
  description: "the chosen option label vs the key",
  verify: (r, e, ctx) => {
    const o = opts(ctx?.options);
    const m = meta(e);
    const options = (m.options ?? m.choices) as Record<string, string> | string[] | undefined;
    const labels = (o.labels ?? m.labels) as string[] | undefined;
    return verifyChoice(r, String(e.answer), { options, labels });
  },
  checkOptions: (o, at) => checkKeys(o, at, { labels: "array" }),
  exampleSchema: choiceExampleSchema,
};

let math: MathModule | null = null;
/** Load the math verifier now, so that later `math` verifications return synchronously. */
export async function preloadMath(): Promise<void> {
  math ??= await loadMath();
}
const mathVerdict = (m: MathModule, r: string, e: Example, o: unknown): Verdict => {
  // fail closed: a row without a reference is a data error, never graded (String(undefined) would be "undefined")
  const ok = mathExampleSchema.safeParse(e);
  if (!ok.success) throw new Error(`math verifier: example field "answer": ${ok.error.issues[0]?.message ?? "invalid"} (got ${JSON.stringify(e.answer) ?? "nothing"})`);
  const v = m.verifyMath(r, String(e.answer), o ?? undefined);
  return { correct: v.correct, reward: v.correct ? 1 : 0, extracted: v.extracted, reason: v.reason };
};
const mathVerifier: Verifier = {
  name: "math",
  description: "math answer equivalence (src/rewards/math)",
  exampleSchema: mathExampleSchema,
  verify: (r, e, ctx) => (math ? mathVerdict(math, r, e, ctx?.options) : loadMath().then((m) => mathVerdict((math = m), r, e, ctx?.options))),
};

const format: Verifier = {
  name: "format",
  description: "the response follows a layout (think-answer or a template)",
  verify: (r, e, ctx) => {
    const o = opts(ctx?.options);
    const template = (meta(e).template ?? o.template) as FormatOptions["template"];
    return verifyFormat(r, { template, allowSurrounding: o.allowSurrounding as boolean | undefined, uniqueTags: o.uniqueTags as string[] | undefined });
  },
  checkOptions: (o, at) => checkKeys(o, at, { template: "string", allowSurrounding: "boolean", uniqueTags: "array" }),
  exampleSchema: formatExampleSchema,
};

const ifeval = ifevalVerifier;

/** Converted rows by example meta (LiveCodeBench's compressed tests are decoded once, not per response). */
const codeSpecs = new WeakMap<object, Map<string, CodeSpec>>();
function codeSpecCached(e: Example, o: Record<string, unknown>): CodeSpec {
  const key = JSON.stringify([o.format, o.language, o.challengeTests === true]);
  const holder = e.meta ?? null;
  const hit = holder ? codeSpecs.get(holder)?.get(key) : undefined;
  if (hit) return hit;
  const spec = codeSpecOf(codeFieldsOf(e), { format: o.format, language: o.language, challengeTests: o.challengeTests === true });
  if (holder) (codeSpecs.get(holder) ?? codeSpecs.set(holder, new Map()).get(holder)!).set(key, spec);
  return spec;
}

const code: Verifier = {
  name: "code",
  description: "the response's program passes the example's tests (sandboxed; rlvr, MBPP, HumanEval, APPS/TACO, CodeContests, LiveCodeBench rows)",
  exampleSchema: codeExampleSchema,
  verify: async (r, e, ctx) => {
    const o = opts(ctx?.options);
    let spec;
    try {
      spec = codeSpecCached(e, o);
    } catch (x) {
      throw new Error(`example ${e.id}: ${(x as Error).message}`);
    }
    return runCodeSpec(r, spec, {
      scoring: o.scoring as "fraction" | "all" | undefined,
      limits: typeof o.timeoutMs === "number" ? { timeoutMs: o.timeoutMs } : undefined,
    });
  },
  checkOptions: (o, at) => {
    checkKeys(o, at, { language: "string", scoring: "string", timeoutMs: "number", format: "string", challengeTests: "boolean" });
    const s = opts(o).scoring;
    if (s !== undefined && s !== "fraction" && s !== "all") throw new Error(`config error at ${at}.scoring: expected "fraction" or "all", got ${JSON.stringify(s)}`);
    const f = opts(o).format;
    if (f !== undefined && !(CODE_FORMATS as readonly unknown[]).includes(f)) throw new Error(`config error at ${at}.format: expected one of ${CODE_FORMATS.join(", ")}, got ${JSON.stringify(f)}`);
  },
};

const majority: Verifier = {
  name: "majority",
  description: "agreement with the group's most frequent answer (TTRL); alone: exact match",
  verify: (r, e) => verifyExactMatch(r, references(e)),
  group: (responses) => {
    const answers = responses.map((r) => {
      const a = answerSpan(r);
      return a === null ? null : normalizeAnswer(a);
    });
    const counts = new Map<string, number>();
    for (const a of answers) if (a) counts.set(a, (counts.get(a) ?? 0) + 1);
    let best: string | null = null;
    let n = 0;
    for (const [a, c] of counts) if (c > n) (best = a), (n = c); // first appearance wins ties
    return answers.map((a) => ({ correct: a !== null && a === best, reward: a !== null && a === best ? 1 : 0, extracted: a, reason: best === null ? "no answers in the group" : `majority answer "${best}" (${n}/${responses.length})` }));
  },
};

for (const v of [exact, f1, choice, mathVerifier, format, ifeval, ifevalReferenceVerifier, code, majority, moduleVerifier]) {
  if (hasVerifier(v.name)) continue;
  const verify = v.verify;
  registerVerifier(v.name, { ...v, verify: (r, e, ctx) => verify(r, asExample(e), ctx) });
}
