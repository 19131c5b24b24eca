/** `rlvr train <config.yaml>`: run the stages a config describes; `--resume <run-dir>` continues one. */
import { join } from "node:path";
import type { Command } from "commander";
import { ConfigError } from "../../config/schema.ts";
import { loadRunConfigFile } from "../../config/plugins.ts";
import { train, NonFiniteError, ResumeError, RunInterrupted } from "../../trainer/run.ts";
import { progressHooks } from "../progress.ts";
import { loadCommandPlugins, withPluginOption } from "../plugins.ts";
import { resolvePluginPath } from "../../config/plugins.ts";

/** Exit status after an interruption (128 + SIGINT, as shells report it). */
export const EXIT_INTERRUPTED = 130;

export function register(program: Command): void {
  withPluginOption(program
    .command("train"))
    .description("train a model from a YAML config (SFT and/or RL stages); --resume continues a run from its latest checkpoint")
    .argument("[config]", "run config (YAML); with --resume, defaults to <run-dir>/config.yaml")
    .option("--out <dir>", "run directory (overrides the config's out)")
    .option("--seed <n>", "seed (overrides the config's seed)", (v) => parseInt(v, 10))
    .option("--resume <run-dir>", "resume this run directory from its newest complete checkpoint")
    .option("--overwrite", "delete the run files already in the run directory (config.yaml, metrics.jsonl, samples.jsonl, eval.jsonl, report.md, checkpoints/) before a fresh start")
    .option("--engine <kind>", "engine: embedded, torch or auto (overrides model.engine; auto: torch where a cached probe finds it faster)")
    .action(async (file: string | undefined, opts: { out?: string; seed?: number; resume?: string; engine?: string; overwrite?: boolean; plugin: string[] }) => {
      const fail = (msg: string, code: number): never => {
        process.stderr.write(msg + "\n");
        process.exit(code);
      };
      if (!file && !opts.resume) fail("error: missing config (rlvr train <config.yaml>, or rlvr train --resume <run-dir>)", 2);
      if (opts.resume && opts.overwrite) fail("error: --overwrite starts a fresh run and --resume continues one; pass one of them", 2);
      if (opts.resume && opts.out && opts.out !== opts.resume) fail(`error: --out ${opts.out} and --resume ${opts.resume} name different run directories`, 2);
      let cfg;
      try {
        await loadCommandPlugins(opts.plugin); // before the config is validated, so it may name what they register
        cfg = await loadRunConfigFile(file ?? join(opts.resume!, "config.yaml"));
      } catch (e) {
        if (e instanceof ConfigError) fail(e.message, 2);
        throw e;
      }
      // --plugin modules join the config's plugins, so the run's config.yaml (and --resume) names them.
      const plugins = [...new Set([...cfg.plugins, ...opts.plugin.map((p) => resolvePluginPath(p, process.cwd()))])];
      cfg = { ...cfg, plugins };
      if (opts.out) cfg.out = opts.out;
      if (opts.resume) cfg.out = opts.resume;
      if (opts.seed !== undefined) cfg.seed = opts.seed;
      if (opts.engine !== undefined) {
        if (opts.engine !== "embedded" && opts.engine !== "torch" && opts.engine !== "auto") fail(`error: --engine must be embedded, torch or auto, got "${opts.engine}"`, 2);
        cfg.model.engine = opts.engine as "embedded" | "torch" | "auto";
      }
      const hooks = progressHooks();
      // SIGINT: finish the current step, write a checkpoint, exit 130. A second SIGINT exits at once
      // (every log line and checkpoint already written stays; a checkpoint being written is ignored on resume).
      const ac = new AbortController();
      const onSigint = () => {
        hooks.stop();
        if (ac.signal.aborted) {
          process.stderr.write("\ninterrupted again: exiting now\n");
          process.exit(EXIT_INTERRUPTED);
        }
        process.stderr.write("\ninterrupt: finishing the current step, then writing a checkpoint (Ctrl-C again to exit now)\n");
        ac.abort();
      };
      process.on("SIGINT", onSigint);
      try {
        const s = await train(cfg, { ...hooks, resume: opts.resume, overwrite: opts.overwrite, signal: ac.signal, engineAdvice: (line) => process.stderr.write(line + "\n") });
        hooks.stop();
        for (const [k, v] of Object.entries(s.evals)) process.stdout.write(`held-out after ${k}: ${heldOutLine(v)}\n`);
        process.stdout.write(`run directory: ${s.dir} (${s.seconds.toFixed(0)} s)\n`);
      } catch (e) {
        hooks.stop();
        if (e instanceof RunInterrupted) {
          const how = file ? `rlvr train ${file} --resume ${cfg.out}` : `rlvr train --resume ${cfg.out}`;
          fail(`${e.message}${e.checkpoint ? `\nresume with: ${how}` : ""}`, EXIT_INTERRUPTED);
        }
        if (e instanceof NonFiniteError || e instanceof ResumeError) fail(e.message, 1);
        throw e;
      } finally {
        process.off("SIGINT", onSigint);
      }
    });
}

/**
 * One eval summary as the line `rlvr train` prints: with several samples per prompt, pass@1 (their
 * mean accuracy) and, when taken, greedy accuracy; with one sample, its accuracy.
 */
export function heldOutLine(v: { accuracy: number; meanAtN: number; samples: number; greedy?: number }): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const head = v.samples > 1 ? `pass@1 ${pct(v.meanAtN)} (mean of ${v.samples} samples)` : `accuracy ${pct(v.accuracy)}`;
  return v.greedy !== undefined && v.samples > 1 ? `${head}, greedy ${pct(v.greedy)}` : head;
}
