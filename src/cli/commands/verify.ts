/**
 * `rlvr verify <kind> [file]` and `rlvr verify-audit <file>`: run a verifier over JSON lines.
 *
 * verify: one JSON object per input line (from the file, or stdin when no file / "-"):
 *   math, choice, exact, f1:  {"response", "reference", ...}      (choice: optional "options", "labels")
 *   format:                   {"response", "template"?}
 *   ifeval:                   {"response", "constraints": [{type, ...}]}  or IFEval's
 *                             {"response", "instruction_id_list", "kwargs"}
 *   code:                     {"response", "tests": [...], "language": "python" | "javascript"}
 *   a plugin's verifier:      {"response", "reference"?, "meta"?, "options"?}  (--plugin <file>, or
 *                             the name a module registered with registerVerifier/defineReward/defineTask)
 * writes one JSON line per non-empty input line: {"line", "correct", "reward", "extracted",
 * "reason", ...}; a bad line gives {"line", "error"} (and a message on stderr naming the line),
 * and the exit code is 1 when any line was bad.
 *
 * verify-audit: a labeled file, each line {"response", "reference" (or the fields above),
 * "equivalent": bool} ("label"/"expected" accepted too), optional "category"; prints false-negative
 * and false-positive rates, per-category counts (when lines have a "category") and the misses as JSON.
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { Command } from "commander";
import { fromIFEval, type Constraint } from "../../rewards/ifeval/index.ts";
import type { CodeTest } from "../../rewards/code/run-tests.ts";
import "../../rewards/verifiers.ts";
import { getVerifier, hasVerifier, verifierNames } from "../../rewards/registry.ts";
import { didYouMean } from "../../util/suggest.ts";
import { loadCommandPlugins, withPluginOption } from "../plugins.ts";
import type { Verdict } from "../../rewards/types.ts";
import type { Example } from "../../tasks/types.ts";

const KINDS = ["math", "choice", "exact", "f1", "format", "ifeval", "code", "judge"] as const;
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
      ex.answer = need(row, "reference", kind) as string;
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
      else ex.answer = String(row.reference);
      if (kind === "f1" && typeof row.threshold === "number") options = { threshold: row.threshold };
      break;
    case "format":
      if (typeof row.template === "string") meta.template = row.template;
      break;
    case "ifeval":
      meta.constraints = Array.isArray(row.constraints)
        ? (row.constraints as Constraint[])
        : Array.isArray(row.instruction_id_list)
          ? fromIFEval(row.instruction_id_list as string[], (row.kwargs as Record<string, unknown>[]) ?? [])
          : (need(row, "constraints", kind, "array") as Constraint[]);
      break;
    case "code": {
      meta.tests = need(row, "tests", kind, "array") as CodeTest[];
      const language = row.language ?? "python";
      if (language !== "python" && language !== "javascript") throw new Error(`field "language": expected "python" or "javascript", got ${JSON.stringify(language)}`);
      meta.language = language;
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
  return (await getVerifier(kind).verify(response, ex, { options })) as ShownVerdict;
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

function parseRow(text: string): Row {
  let v: unknown;
  try {
    v = JSON.parse(text);
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
          const v = await verifyRow(kind, parseRow(text), { timeoutMs: o.timeout, scoring: o.allOrNothing ? "all" : "fraction" });
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
    .description("false-negative / false-positive rates of a verifier on a labeled JSONL file")
    .argument("<file>", 'JSONL with {"response", "reference", "equivalent": bool} per line')
    .option("--kind <kind>", `verifier: ${KINDS.join(" | ")}`, "math")
    .option("--max-misses <n>", "misses listed in the report", (v) => parseInt(v, 10), 50)
    .option("--judge-url <url>", "judge: the grader's OpenAI-compatible base URL")
    .option("--judge-model <id>", "judge: the grader's model id")
    .action(async (file: string, o: { kind: string; maxMisses: number; judgeUrl?: string; judgeModel?: string }) => {
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
