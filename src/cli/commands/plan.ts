/** `rlvr plan <config.yaml>`: the run's memory plan per device, as a table; exit 1 when it cannot fit. */
import type { Command } from "commander";
import { ConfigError } from "../../config/schema.ts";
import { planMemory } from "../../api/train.ts";
import { checkMemoryPlan, formatMemoryPlan } from "../../trainer/plan.ts";

export function register(program: Command): void {
  program
    .command("plan")
    .description("estimate a run's memory per device (parameters, gradients, optimizer, activations, reference, vLLM weights and KV cache, sync buffers) before anything starts")
    .argument("<config>", "run config (YAML)")
    .option("--gpu-gib <n>", "GPU memory to check a CUDA run against (default: not checked)", (v) => Number(v))
    .action(async (file: string, opts: { gpuGib?: number }) => {
      let plan;
      try {
        plan = await planMemory(file, opts.gpuGib ? { gpuBytes: opts.gpuGib * 2 ** 30 } : {});
      } catch (e) {
        if (e instanceof ConfigError || /^config error/.test((e as Error).message) || /too large for the embedded engine/.test((e as Error).message)) {
          process.stderr.write((e as Error).message + "\n");
          process.exit(e instanceof ConfigError ? 2 : 1);
        }
        throw e;
      }
      if (!plan) {
        process.stdout.write("no plan: model.path's config.json is not an architecture rlvr can size\n");
        return;
      }
      process.stdout.write(formatMemoryPlan(plan) + "\n");
      const bad = checkMemoryPlan(plan);
      if (bad) {
        process.stderr.write(`config error in ${file} at ${bad.field}: ${bad.message}\n`);
        process.exit(1);
      }
    });
}
