/** `rlvr eval <run-dir|checkpoint> --task ...`: held-out accuracy, pass@k, lengths of a checkpoint. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { EmbeddedEngine } from "../../engines/embedded/engine.ts";
import { loadTokenizer } from "../../tokenizers/index.ts";
import { getTask, generateExamples, loadDataset, renderPrompt } from "../../tasks/index.ts";
import { evaluate } from "../../eval/accuracy.ts";
import { buildVerifier } from "../../trainer/context.ts";
import { parseRunConfig } from "../../config/schema.ts";

/** A run directory's final checkpoint, or the directory itself when it holds config.json. */
export function resolveCheckpoint(path: string): string {
  if (existsSync(join(path, "config.json"))) return path;
  const final = join(path, "checkpoints", "final");
  if (existsSync(join(final, "config.json"))) return final;
  throw new Error(`no checkpoint at ${path}: expected config.json there or in ${final}`);
}

export function register(program: Command): void {
  program
    .command("eval")
    .description("evaluate a checkpoint on held-out data")
    .argument("<path>", "run directory or checkpoint directory")
    .option("--task <name>", "procedural task to generate held-out prompts from")
    .option("--difficulty <d>", "task difficulty", (v) => parseInt(v, 10))
    .option("--data <file>", "JSONL/Parquet file of examples instead of a task")
    .option("--verifier <name>", "verifier for --data rows (a task name or math)", "math")
    .option("--n <count>", "number of prompts", (v) => parseInt(v, 10), 256)
    .option("--samples <k>", "samples per prompt (pass@k for k up to this)", (v) => parseInt(v, 10), 1)
    .option("--temperature <t>", "sampling temperature (0 = greedy)", parseFloat, 0)
    .option("--max-new-tokens <n>", "response budget", (v) => parseInt(v, 10), 32)
    .option("--seed <s>", "seed", (v) => parseInt(v, 10), 1)
    .option("--template <name>", "prompt template: plain, r1, boxed", "plain")
    .action(async (path: string, o: { task?: string; difficulty?: number; data?: string; verifier: string; n: number; samples: number; temperature: number; maxNewTokens: number; seed: number; template: "plain" | "r1" | "boxed" }) => {
      if (!o.task && !o.data) throw new Error("rlvr eval: give --task <name> or --data <file>");
      const dir = resolveCheckpoint(path);
      const tokenizer = await loadTokenizer(dir);
      const engine = await EmbeddedEngine.fromPretrained(dir, { tokenizer });
      const examples = o.data
        ? (await loadDataset(o.data, { task: o.task })).examples.slice(0, o.n)
        : generateExamples(getTask(o.task!), { n: o.n, seed: o.seed, difficulty: o.difficulty, split: "test" });
      const cfg = parseRunConfig({ model: { path: dir }, data: { task: o.task, train: o.data, verifier: o.task ?? o.verifier } });
      const verify = buildVerifier(cfg);
      const encodePrompt = (ex: (typeof examples)[number]) => {
        const ids = tokenizer.encode(renderPrompt(ex, { template: o.template }));
        return Int32Array.from(tokenizer.bosId !== null ? [tokenizer.bosId, ...ids] : ids);
      };
      const r = await evaluate({ engine, tokenizer, verify, encodePrompt }, examples, { maxNewTokens: o.maxNewTokens, temperature: o.temperature, n: o.samples, seed: o.seed });
      process.stdout.write(JSON.stringify({ checkpoint: dir, ...r }, null, 2) + "\n");
      await engine.close();
    });
}
