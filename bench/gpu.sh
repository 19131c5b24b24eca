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
