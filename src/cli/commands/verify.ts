/**
 * `rlvr verify <kind> [file]` and `rlvr verify-audit <file>`: run a verifier over JSON lines.
 *
 * verify: one JSON object per input line (from the file, or stdin when no file / "-"):
 *   math, choice, exact, f1:  {"response", "reference", ...}      (choice: optional "options", "labels")
 *   format:                   {"response", "template"?}
 *   ifeval, ifeval-reference: {"response", "constraints": [{type, ...}]}  or IFEval's
 *                             {"response", "instruction_id_list", "kwargs"}
 *   code:                     {"response", "tests": [...], "language": "python" | "javascript"}, or a
 *                             public dataset's row plus "response" (MBPP, HumanEval, APPS/TACO,
 *                             CodeContests, LiveCodeBench; "format" optional, see rewards/code/formats.ts)
 *   a plugin's verifier:      {"response", "reference"?, "meta"?, "options"?}  (--plugin <file>, or
 *                             the name a module registered with registerVerifier/defineReward/defineTask)
 * writes one JSON line per non-empty input line: {"line", "correct", "reward", "extracted",
 * "reason", ...}; a bad line gives {"line", "error"} (and a message on stderr naming the line),
 * and the exit code is 1 when any line was bad.
 *
 * verify-audit: a labeled file, each line {"response", "reference" (or the fields above),
 * "equivalent": bool} ("label"/"expected" accepted too), optional "category"; prints false-negative
 * and false-positive rates, per-category counts (when lines have a "category") and the misses as JSON.
 * verify-audit --attack <dataset> --reward <spec>: the attack library against the dataset's rows
 * under a reward (./audit-attack.ts); a table of every attack that scored above 0, exit 1 if any.
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { Command } from "commander";
import { fromIFEval, type Constraint } from "../../rewards/ifeval/index.ts";
import { parseCodeJson } from "../../rewards/code/forms.ts";
import "../../rewards/verifiers.ts";
import { getVerifier, hasVerifier, verifierNames } from "../../rewards/registry.ts";
import { exampleIssue } from "../../rewards/example-schema.ts";
import { runAttackAudit, type AttackAuditOptions } from "./audit-attack.ts";
import { didYouMean } from "../../util/suggest.ts";
import { loadCommandPlugins, withPluginOption } from "../plugins.ts";
import type { Verdict } from "../../rewards/types.ts";
import type { Example } from "../../core/example.ts";

const KINDS = ["math", "choice", "exact", "f1", "format", "ifeval", "ifeval-reference", "code", "judge"] as const;
type Kind = (typeof KINDS)[number];

type Row = Record<string, unknown>;
/** A verdict with the verifier's own extra fields (code cases, IFEval results, …). */
type ShownVerdict = Verdict & Record<string, unknown>;

function need(row: Row, field: string, kind: string, type: "string" | "array" = "string"): unknown {
  const v = row[field];
  const ok = type === "array" ? Array.isArray(v) : typeof v === "string";
  if (!ok) {
    const have = Object.keys(row).join(", ") || "none";
    throw new Error(`missing or invalid field "${field}" (expected ${type === "array" ? "an array" : "a string"}; fields: ${have}) for "rlvr verify ${kind}"`);
  }
  return v;
}

/**
 * Verify one parsed row with the verifier of `kind`.
 * @throws Error naming the missing/invalid field
 */
export async function verifyRow(kind: Kind | string, row: Row, opts: { timeoutMs?: number; scoring?: "fraction" | "all"; judge?: Record<string, unknown> } = {}): Promise<ShownVerdict> {
  const response = need(row, "response", kind) as string;
  // The row becomes an example of the registry's verifier (src/rewards/verifiers.ts says what each reads).
  const ex: Example = { id: "row", prompt: "", answer: "", task: kind, meta: {} };
  const meta = ex.meta!;
  let options: Record<string, unknown> | undefined;
  switch (kind) {
    case "math":
      // a number is a reference too (GSM8K-style rows); the math verifier's exampleSchema rejects empty ones
      ex.answer = typeof row.reference === "number" && Number.isFinite(row.reference) ? String(row.reference) : (need(row, "reference", kind) as string);
      options = row.options as Record<string, unknown> | undefined;
      break;
    case "choice":
      ex.answer = need(row, "reference", kind) as string;
      meta.options = row.options;
      meta.labels = row.labels;
      break;
    case "exact":
    case "f1":
      if (Array.isArray(row.reference)) meta.answers = row.reference;
      else if (typeof row.reference === "string" || typeof row.reference === "number") ex.answer = String(row.reference);
      else need(row, "reference", kind);
      if (kind === "f1" && typeof row.threshold === "number") options = { threshold: row.threshold };
      break;
    case "format":
      if (typeof row.template === "string") meta.template = row.template;
      break;
    case "ifeval":
    case "ifeval-reference":
      meta.constraints = Array.isArray(row.constraints)
        ? (row.constraints as Constraint[])
        : Array.isArray(row.instruction_id_list)
          ? fromIFEval(row.instruction_id_list as string[], (row.kwargs as Record<string, unknown>[]) ?? [])
          : (need(row, "constraints", kind, "array") as Constraint[]);
      break;
    case "code": {
      // The row's own fields, in any format the verifier reads (src/rewards/code/formats.ts).
      const { response: _r, ...fields } = row;
      Object.assign(meta, fields);
      options = { scoring: opts.scoring, ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) };
      break;
    }
    case "judge": // {"response", "reference", "question"?, "options"?}; the endpoint from --judge-url/--judge-model (src/rewards/judge.ts)
      ex.answer = String(need(row, "reference", kind));
      ex.prompt = typeof row.question === "string" ? row.question : "";
      options = { ...opts.judge, ...(row.options as Record<string, unknown> | undefined) };
      break;
    default: // a registered (plugin) verifier: the row's reference, meta and options as they are
      if (row.reference !== undefined) ex.answer = typeof row.reference === "string" ? row.reference : JSON.stringify(row.reference);
      if (row.meta && typeof row.meta === "object") Object.assign(meta, row.meta);
      options = row.options as Record<string, unknown> | undefined;
  }
  const verifier = getVerifier(kind);
  // Fail closed: a line the verifier's schema refuses is an error naming its field, never graded.
  const issue = verifier.exampleSchema ? exampleIssue(verifier.exampleSchema, ex) : null;
  if (issue) throw new Error(`field "${lineField(issue.field)}": ${issue.message}`);
  return (await verifier.verify(response, ex, { options })) as ShownVerdict;
}

/** An example field path as the input line's field: `answer` → `reference`, `meta.tests[0]` → `tests[0]`. */
function lineField(path: string): string {
  if (/^answer(?=$|[.[])/.test(path)) return "reference" + path.slice(6);
  if (/^meta\.answers(?=$|[.[])/.test(path)) return "reference" + path.slice(12);
  if (/^meta\./.test(path)) return path.slice(5);
  return path || "(line)";
}

async function* lines(file: string | undefined): AsyncGenerator<{ n: number; text: string }> {
  const input = !file || file === "-" ? process.stdin : createReadStream(file, { encoding: "utf8" });
  const rl = createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  for await (const text of rl) {
    n++;
    if (text.trim() === "") continue;
    yield { n, text };
  }
}

function parseRow(text: string, kind?: Kind | string): Row {
  let v: unknown;
  try {
    // Code rows keep big integers exact (expected values, APPS/LiveCodeBench outputs).
    v = kind === "code" ? parseCodeJson(text) : JSON.parse(text);
  } catch (e) {
    throw new Error(`invalid JSON (${(e as Error).message})`);
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("expected a JSON object");
  return v as Row;
}

/** A built-in kind, or a verifier a plugin registered; else one line with "did you mean". */
function checkKind(kind: string): Kind | string {
  if ((KINDS as readonly string[]).includes(kind) || hasVerifier(kind)) return kind;
  const names = [...new Set([...KINDS, ...verifierNames()])];
  throw new Error(`rlvr verify: unknown verifier "${kind}"; ${didYouMean(kind, names)}choose one of ${KINDS.join(", ")}, or a name a --plugin module registers`);
}

function compact(v: ShownVerdict): Row {
  // Keep the JSON line short: drop bulky per-case payloads' internals but keep their verdicts.
  const out: Row = { ...v };
  if (Array.isArray(out.cases)) out.cases = (out.cases as { passed: boolean; reason: string }[]).map((c) => ({ passed: c.passed, reason: c.reason }));
  return out;
}

export function register(program: Command): void {
  withPluginOption(program
    .command("verify"))
    .description("run a verifier over JSON lines ({response, reference} per line) from a file or stdin")
    .argument("<kind>", `verifier: ${KINDS.join(" | ")}, or one a --plugin registers`)
    .argument("[file]", "JSONL file (default: stdin)")
    .option("--timeout <ms>", "code: wall-clock limit per program run, ms", (v) => parseInt(v, 10))
    .option("--all-or-nothing", "code: reward 1 only when every test passes")
    .action(async (kindArg: string, file: string | undefined, o: { timeout?: number; allOrNothing?: boolean; plugin: string[] }) => {
      await loadCommandPlugins(o.plugin);
      const kind = checkKind(kindArg);
      const where = file && file !== "-" ? file : "stdin";
      let bad = 0;
      for await (const { n, text } of lines(file)) {
        try {
          const v = await verifyRow(kind, parseRow(text, kind), { timeoutMs: o.timeout, scoring: o.allOrNothing ? "all" : "fraction" });
          process.stdout.write(JSON.stringify({ line: n, ...compact(v) }) + "\n");
        } catch (e) {
          bad++;
          const msg = (e as Error).message;
          process.stderr.write(`verify error at ${where} line ${n}: ${msg}\n`);
          process.stdout.write(JSON.stringify({ line: n, error: msg }) + "\n");
        }
      }
      if (bad) process.exitCode = 1;
    });

  program
    .command("verify-audit")
    .description("audit a verifier: false-negative / false-positive rates on a labeled JSONL file, or --attack <dataset> --reward <spec>: every degenerate or adversarial response that scores above 0")
    .argument("[file]", 'JSONL with {"response", "reference", "equivalent": bool} per line (not with --attack)')
    .option("--kind <kind>", `verifier: ${KINDS.join(" | ")}`, "math")
    .option("--max-misses <n>", "misses listed in the report", (v) => parseInt(v, 10), 50)
    .option("--judge-url <url>", "judge: the grader's OpenAI-compatible base URL")
    .option("--judge-model <id>", "judge: the grader's model id")
    .option("--attack <dataset>", "run the attack library against this dataset's rows (JSONL/Parquet) under --reward; exit 1 when any attack scores above 0")
    .option("--reward <spec>", "--attack: a verifier name, a reward block ('{components: [...]}'), a module (./r.ts#score) or a run config (.yaml)")
    .option("--plugin <module>", "--attack: import a module that registers verifiers (repeatable)", (v: string, prev: string[] = []) => [...prev, v])
    .option("--preset <name>", "--attack: the dataset's preset (generic, gsm8k, math, deepscaler, orz)")
    .option("--task <name>", "--attack: task name for rows without one")
    .option("--limit <n>", "--attack: audit the first n rows (default 100)", (v) => parseInt(v, 10))
    .option("--attacks <names>", "--attack: only these attacks, comma-separated (default: all)")
    .option("--skip-bad-rows", "--attack: skip and count rows the reward's schemas refuse instead of stopping")
    .option("--json", "--attack: print the report as JSON")
    .action(async (file: string | undefined, o: { kind: string; maxMisses: number; judgeUrl?: string; judgeModel?: string; attack?: string; reward?: string; plugin?: string[]; preset?: string; task?: string; limit?: number; attacks?: string; skipBadRows?: boolean; json?: boolean }) => {
      if (o.attack !== undefined) {
        if (file !== undefined) throw new Error("rlvr verify-audit: give either a labeled file or --attack <dataset>, not both");
        const found = await runAttackAudit(o.attack, { ...o, preset: o.preset as AttackAuditOptions["preset"], onBadRow: o.skipBadRows ? "skip" : "error" });
        if (found > 0) process.exitCode = 1;
        return;
      }
      if (file === undefined) throw new Error("rlvr verify-audit: give a labeled JSONL file, or --attack <dataset> --reward <spec>");
      const kind = checkKind(o.kind);
      const t0 = performance.now();
      let positives = 0;
      let negatives = 0;
      let correct = 0;
      const falseNegatives: Row[] = [];
      const falsePositives: Row[] = [];
      const byCategory: Record<string, { n: number; agree: number; falsePositives: number; falseNegatives: number }> = {};
      let bad = 0;
      for await (const { n, text } of lines(file)) {
        try {
          const row = parseRow(text);
          const label = row.equivalent ?? row.label ?? row.expected;
          if (typeof label !== "boolean") throw new Error(`missing boolean field "equivalent" (fields: ${Object.keys(row).join(", ")})`);
          const v = await verifyRow(kind, row, { judge: { baseURL: o.judgeUrl, model: o.judgeModel } });
          if (label) positives++;
          else negatives++;
          if (v.correct === label) correct++;
          else (label ? falseNegatives : falsePositives).push({ line: n, response: row.response, reference: row.reference, extracted: v.extracted, reason: v.reason });
          if (typeof row.category === "string") {
            const c = (byCategory[row.category] ??= { n: 0, agree: 0, falsePositives: 0, falseNegatives: 0 });
            c.n++;
            if (v.correct === label) c.agree++;
            else if (label) c.falseNegatives++;
            else c.falsePositives++;
          }
        } catch (e) {
          bad++;
          process.stderr.write(`verify-audit error at ${file} line ${n}: ${(e as Error).message}\n`);
        }
      }
      const total = positives + negatives;
      const report = {
        kind,
        file,
        n: total,
        accuracy: total ? correct / total : 1,
        positives,
        negatives,
        falseNegativeRate: positives ? falseNegatives.length / positives : 0,
        falsePositiveRate: negatives ? falsePositives.length / negatives : 0,
        ...(Object.keys(byCategory).length > 0 ? { byCategory } : {}),
        falseNegatives: falseNegatives.slice(0, o.maxMisses),
        falsePositives: falsePositives.slice(0, o.maxMisses),
        badLines: bad,
        elapsedMs: Math.round(performance.now() - t0),
      };
      process.stdout.write(JSON.stringify(report, null, 2) + "\n");
      if (bad) process.exitCode = 1;
    });
}
