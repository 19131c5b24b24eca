/**
 * Fail closed at load: what a verifier grades is declared as a zod schema over the `Example` it
 * receives (`Verifier.exampleSchema`), and every row is checked against the schema of each
 * verifier it will meet before any response is graded. A row that matches no schema is a data
 * error naming its field (`meta.tests[0]: …`), never a default that scores.
 *
 * The schemas here are the shared pieces (a reference answer that is present and not blank); the
 * code, math and ifeval verifiers declare their own beside their code.
 */
import { z, type ZodType } from "zod";
import type { Example } from "../core/example.ts";

/** The first way an example fails a schema: a field path in the example and what is wrong. */
export interface ExampleIssue {
  /** Dotted path with indices, e.g. `meta.tests[0].expected`; "" for the example itself. */
  field: string;
  /** zod's message for the first issue, e.g. `expected string, received undefined`. */
  message: string;
}

/** A zod issue path as a field path: `["meta", "tests", 0, "call"]` → `meta.tests[0].call`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? String(p) : `.${String(p)}`;
  return out;
}

/**
 * Check an example against a verifier's schema.
 * @returns null when it matches; else the first issue (field path and zod's message)
 * @throws never (a schema that throws counts as an issue at the example itself)
 */
export function exampleIssue(schema: ZodType, example: Example): ExampleIssue | null {
  let res: ReturnType<ZodType["safeParse"]>;
  try {
    res = schema.safeParse(example);
  } catch (e) {
    return { field: "", message: `the verifier's schema failed: ${(e as Error)?.message ?? String(e)}` };
  }
  if (res.success) return null;
  const first = res.error.issues[0];
  return first ? { field: fieldPath(first.path), message: first.message } : { field: "", message: "does not match the verifier's schema" };
}

const text = z.union([z.string(), z.number()]);
const nonBlank = (what: string) => text.refine((s) => String(s).trim() !== "", { message: `${what} is empty` });

/**
 * A reference answer the short-answer verifiers (exact, f1) can compare with: a non-blank `answer`,
 * or `meta.answers` as a non-empty list of non-blank strings (which then wins).
 */
export const referenceAnswerSchema: ZodType = z.looseObject({ answer: z.unknown().optional(), meta: z.unknown().optional() }).superRefine((e, ctx) => {
  const many = (e.meta as { answers?: unknown } | undefined)?.answers;
  if (many !== undefined) {
    const r = z.array(nonBlank("a reference answer")).min(1, { message: "an empty list of reference answers" }).safeParse(many);
    for (const i of r.success ? [] : r.error.issues.slice(0, 1)) ctx.addIssue({ code: "custom", path: ["meta", "answers", ...i.path], message: i.message });
    return;
  }
  const r = nonBlank("the reference answer").safeParse(e.answer);
  if (!r.success) ctx.addIssue({ code: "custom", path: ["answer"], message: e.answer === undefined ? "missing reference answer" : r.error.issues[0]!.message });
});

const optionTexts = z.union([z.array(z.string()).min(1), z.record(z.string(), z.string())], { error: "expected a non-empty list of option texts or a {label: text} map" });

/** The choice verifier's row: a non-blank key in `answer`; option texts and labels, when given, as lists (or a label → text map) of strings. */
export const choiceExampleSchema: ZodType = z.looseObject({
  answer: nonBlank("the answer key"),
  meta: z
    .looseObject({
      options: optionTexts.optional(),
      choices: optionTexts.optional(),
      labels: z.array(z.string().min(1)).min(1).optional(),
    })
    .optional(),
});

/** The format verifier's row: a template, when the row gives one, is a string. */
export const formatExampleSchema: ZodType = z.looseObject({
  meta: z.looseObject({ template: z.string().min(1).optional() }).optional(),
});
