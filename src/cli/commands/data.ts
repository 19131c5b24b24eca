/**
 * `rlvr data` — dataset tools.
 *   rlvr data gen <task> --n N --difficulty D --seed S [--split train|test] [--out file.jsonl]
 *       Generate N examples of a procedural task as JSONL (stdout when no --out).
 *   rlvr data inspect <file> [--preset P] [--field-prompt F] [--field-answer F] [--show K]
 *                         [--template plain|r1|boxed] [--chat-template <tokenizer dir | tokenizer_config.json>]
 *       Load a JSONL/Parquet dataset and show counts, fields, skipped rows and a few prompts,
 *       rendered as the model sees them (the named template, through the chat template if given).
 */
import type { Command } from "commander";
import { loadCommandPlugins, withPluginOption } from "../plugins.ts";
import { getTask, listTasks, generateExamples, examplesToJsonl, writeExamplesJsonl, loadDataset, DATASET_PRESETS, PROMPT_TEMPLATES, renderPrompt, loadChatTemplateFrom } from "../../tasks/index.ts";
import type { DatasetPreset, LoadOptions, PromptTemplateName, RenderOptions } from "../../tasks/index.ts";

function intOption(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: expected an integer >= ${min}, got "${value}"`);
    return n;
  };
}

/** Options of `rlvr data gen`. */
export interface DataGenOptions {
  n: number;
  seed: number;
  difficulty?: number;
  split?: "train" | "test";
  out?: string;
}

/**
 * Generate examples of a registered task and write them as JSONL to `opts.out`, or return the
 * JSONL text when there is no `out`. Throws on an unknown task or an out-of-range difficulty.
 */
export function runDataGen(taskName: string, opts: DataGenOptions): string | null {
  const task = getTask(taskName);
  const examples = generateExamples(task, { n: opts.n, seed: opts.seed, difficulty: opts.difficulty, split: opts.split ?? "train" });
  if (opts.out) {
    writeExamplesJsonl(opts.out, examples);
    return null;
  }
  return examplesToJsonl(examples);
}

/** How `rlvr data inspect` renders the prompts it shows. */
export interface InspectRenderOptions {
  /** Named prompt template (default plain). */
  template?: PromptTemplateName;
  /** A tokenizer directory or tokenizer_config.json whose chat template the prompts go through. */
  chatTemplate?: string;
}

/**
 * Build the text report of `rlvr data inspect`: counts, fields, skipped rows and the first `show`
 * prompts rendered as the model sees them (renderPrompt with the named template and, when given,
 * the chat template). Throws on an unknown template or a path without a chat template.
 */
export async function inspectDataset(path: string, load: LoadOptions, show = 3, render: InspectRenderOptions = {}): Promise<string> {
  const template = render.template ?? "plain";
  if (!PROMPT_TEMPLATES.includes(template)) throw new Error(`--template: expected one of ${PROMPT_TEMPLATES.join(", ")}, got "${String(template)}"`);
  const opts: RenderOptions = { template };
  if (render.chatTemplate !== undefined) opts.chat = loadChatTemplateFrom(render.chatTemplate);
  const res = await loadDataset(path, { ...load, onBadRow: "skip" });
  const lines: string[] = [];
  lines.push(`file: ${path}`);
  lines.push(`examples: ${res.examples.length}   skipped rows: ${res.skipped}`);
  lines.push(`fields: ${res.columns.join(", ") || "(none)"}`);
  const byTask = new Map<string, number>();
  for (const ex of res.examples) {
    const key = ex.difficulty === undefined ? ex.task : `${ex.task} (difficulty ${ex.difficulty})`;
    byTask.set(key, (byTask.get(key) ?? 0) + 1);
  }
  for (const [k, v] of [...byTask.entries()].sort()) lines.push(`  ${k}: ${v}`);
  for (const s of res.skippedRows.slice(0, 5)) lines.push(`  skipped line/row ${s.line}: ${s.reason}`);
  if (show > 0 && res.examples.length > 0) {
    lines.push(`prompts rendered with template ${template}${render.chatTemplate !== undefined ? ` and the chat template of ${render.chatTemplate}` : ""}:`);
  }
  for (const ex of res.examples.slice(0, show)) {
    lines.push("", `--- ${ex.id} ---`, renderPrompt(ex, opts), `answer: ${ex.answer}`);
  }
  return lines.join("\n") + "\n";
}

/** Add the `data` command (with `gen` and `inspect`) to the CLI. */
export function register(program: Command): void {
  const data = program.command("data").description("generate and inspect datasets");
  withPluginOption(data
    .command("gen"))
    .description(`generate a procedural task as JSONL (tasks: ${listTasks().join(", ")})`)
    .argument("<task>", "task name")
    .requiredOption("--n <n>", "number of examples", intOption("n", 0))
    .option("--difficulty <d>", "difficulty level (default: the task's default)", intOption("difficulty", 0))
    .option("--seed <s>", "random seed", intOption("seed", 0), 0)
    .option("--split <split>", "train or test", "train")
    .option("--out <file>", "output JSONL file (default: stdout)")
    .action(async (taskName: string, o: { n: number; difficulty?: number; seed: number; split: string; out?: string; plugin: string[] }) => {
      await loadCommandPlugins(o.plugin);
      if (o.split !== "train" && o.split !== "test") throw new Error(`--split: expected train or test, got "${o.split}"`);
      const text = runDataGen(taskName, { n: o.n, seed: o.seed, difficulty: o.difficulty, split: o.split, out: o.out });
      if (text !== null) process.stdout.write(text);
      else process.stderr.write(`wrote ${o.n} ${taskName} examples to ${o.out}\n`);
    });
  data
    .command("inspect")
    .description("show counts, fields and a few prompts of a JSONL or Parquet dataset")
    .argument("<file>", "dataset file (.jsonl or .parquet)")
    .option("--preset <preset>", `schema preset (${DATASET_PRESETS.join(", ")})`, "generic")
    .option("--field-prompt <field>", "field that holds the prompt")
    .option("--field-answer <field>", "field that holds the reference answer")
    .option("--show <k>", "number of prompts to show", intOption("show", 0), 3)
    .option("--template <name>", `prompt template the shown prompts are rendered with (${PROMPT_TEMPLATES.join(", ")})`, "plain")
    .option("--chat-template <path>", "render the shown prompts through the chat template of a tokenizer directory or tokenizer_config.json")
    .action(async (file: string, o: { preset: string; fieldPrompt?: string; fieldAnswer?: string; show: number; template: string; chatTemplate?: string }) => {
      const fields: LoadOptions["fields"] = {};
      if (o.fieldPrompt) fields.prompt = o.fieldPrompt;
      if (o.fieldAnswer) fields.answer = o.fieldAnswer;
      const render: InspectRenderOptions = { template: o.template as PromptTemplateName };
      if (o.chatTemplate !== undefined) render.chatTemplate = o.chatTemplate;
      process.stdout.write(await inspectDataset(file, { preset: o.preset as DatasetPreset, fields }, o.show, render));
    });
}
