/** `rlvr train <config.yaml>`: run the stages a config describes. */
import type { Command } from "commander";
import { loadRunConfig, ConfigError } from "../../config/schema.ts";
import { train } from "../../trainer/run.ts";
import { progressHooks } from "../progress.ts";

export function register(program: Command): void {
  program
    .command("train")
    .description("train a model from a YAML config (SFT and/or RL stages)")
    .argument("<config>", "run config (YAML)")
    .option("--out <dir>", "run directory (overrides the config's out)")
    .option("--seed <n>", "seed (overrides the config's seed)", (v) => parseInt(v, 10))
    .action(async (file: string, opts: { out?: string; seed?: number }) => {
      let cfg;
      try {
        cfg = loadRunConfig(file);
      } catch (e) {
        if (e instanceof ConfigError) {
          process.stderr.write(e.message + "\n");
          process.exit(2);
        }
        throw e;
      }
      if (opts.out) cfg.out = opts.out;
      if (opts.seed !== undefined) cfg.seed = opts.seed;
      const hooks = progressHooks();
      const s = await train(cfg, hooks);
      hooks.stop();
      for (const [k, v] of Object.entries(s.evals)) process.stdout.write(`held-out accuracy after ${k}: ${(v.accuracy * 100).toFixed(1)}%\n`);
      process.stdout.write(`run directory: ${s.dir} (${s.seconds.toFixed(0)} s)\n`);
    });
}
