#!/usr/bin/env bash
# The torch engine's GPU path: a randomly initialised model of Qwen2.5-0.5B's shape on one CUDA GPU.
# Records sampling tokens/s, training tokens/s (forward-backward + AdamW) and peak GPU memory;
# copy the printed table into docs/benchmarks.md ("Torch engine").
#
#   bash bench/gpu.sh                 # needs node_modules (npm ci) and a CUDA build of torch:
#   node bin/rlvr.js setup torch --torch-index-url https://download.pytorch.org/whl/cu128
#
# Extra arguments go to bench/torch-gpu.ts (e.g. --prompts 32 --new 1024 --checkpointing).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${RLVR_PYTHON:-python/.venv/bin/python}"
if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "bench/gpu.sh: $PY has no CUDA-enabled torch (or no GPU is visible); see docs/engines.md (GPU setup)" >&2
  exit 1
fi
"$PY" -c 'import torch; print("#", torch.__version__, torch.cuda.get_device_name(0))'
export RLVR_PYTHON="$PY"
node --import tsx bench/torch-gpu.ts "$@"
node --import tsx bench/torch-gpu.ts --checkpointing "$@"

# Multi-GPU (model.distributed): one GRPO step on 1 GPU vs all visible GPUs under torchrun
# (FSDP2 and DDP, NCCL), bench/scale.ts; copy its table into docs/benchmarks.md ("Scale-out").
NGPU="$("$PY" -c 'import torch; print(torch.cuda.device_count())')"
if [ "$NGPU" -ge 2 ]; then
  BENCH_DEVICE=cuda BENCH_RANKS="$NGPU" BENCH_SKIP_VLLM=1 BENCH_SEQS="${BENCH_SEQS:-256}" BENCH_LEN="${BENCH_LEN:-512}" \
    BENCH_HIDDEN="${BENCH_HIDDEN:-1024}" BENCH_LAYERS="${BENCH_LAYERS:-8}" node --import tsx bench/scale.ts
else
  echo "# multi-GPU case skipped: $NGPU GPU visible (needs 2 or more)"
fi

# vLLM rollouts on the GPU (rlvr setup vllm --cuda): HF generate vs vLLM tokens/s and weight-sync
# seconds per step, colocated (sleep/wake) and one server; bench/scale-vllm.ts. Copy its table into
# docs/benchmarks.md ("Scale-out", vLLM).
VPY="${RLVR_VLLM_PYTHON:-python/.venv-vllm/bin/python}"
if [ -x "$VPY" ] && "$VPY" -c 'import vllm, torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  RLVR_VLLM_PYTHON="$VPY" BENCH_DEVICE=cuda BENCH_PROMPTS="${BENCH_PROMPTS:-64}" BENCH_NEW="${BENCH_NEW:-512}" \
    BENCH_HIDDEN="${BENCH_HIDDEN:-1024}" BENCH_LAYERS="${BENCH_LAYERS:-8}" node --import tsx bench/scale-vllm.ts
else
  echo "# vLLM case skipped: $VPY has no CUDA build of vLLM (run: node bin/rlvr.js setup vllm --cuda)"
fi

# Faults and LoRA with vLLM on the GPU: the fault-injection tests (vLLM servers killed, killed
# during a weight sync, SIGSTOPped; the torch worker killed during forwardBackward and hung) and
# LoRA with colocated vLLM (adapter pushed through vLLM's LoRA loading; log-prob parity), with the
# trainer and vLLM on CUDA (RLVR_TEST_DEVICE=cuda). docs/scaling.md, "Deadlines, faults and recovery".
if [ -x "$VPY" ] && "$VPY" -c 'import vllm, peft, torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  RLVR_VLLM_PYTHON="$VPY" RLVR_TEST_DEVICE=cuda node scripts/run-tests.mjs test/scale/torch-worker-faults.test.ts test/scale/vllm-faults.test.ts
  RLVR_VLLM_PYTHON="$VPY" RLVR_TEST_DEVICE=cuda node --import tsx --test --test-name-pattern LoRA test/scale/vllm.test.ts
else
  echo "# vLLM fault and LoRA cases skipped: $VPY has no CUDA build of vLLM with peft (run: node bin/rlvr.js setup vllm --cuda)"
fi
