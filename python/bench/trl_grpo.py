"""Baseline for bench/torch.ts: TRL's GRPOTrainer on the same tiny checkpoint and settings.

Reward: 1 when the completion starts with "a" (the benchmark's procedural task). Prints one JSON
line {"step_seconds": [...], "trl": version, "torch": version} on stdout. Run with the benchmark
environment (python/.venv-bench: torch==2.13.0, transformers, trl, datasets).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, List

import torch
import trl
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
from trl import GRPOConfig, GRPOTrainer


class StepTimer(TrainerCallback):  # type: ignore[misc]
    def __init__(self) -> None:
        self.t = time.perf_counter()
        self.steps: List[float] = []

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        now = time.perf_counter()
        self.steps.append(now - self.t)
        self.t = now


def reward_first_a(completions: List[str], **kw: Any) -> List[float]:
    return [1.0 if c.startswith("a") else 0.0 for c in completions]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--prompts", type=str, required=True, help="JSON list of prompt strings")
    ap.add_argument("--prompts-per-step", type=int, default=8)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--max-new", type=int, default=16)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--beta", type=float, default=0.001)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    tok = AutoTokenizer.from_pretrained(a.model)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.float32)
    prompts = json.loads(a.prompts)
    n_rows = a.prompts_per_step * (a.steps + 1)
    ds = Dataset.from_dict({"prompt": [prompts[i % len(prompts)] for i in range(n_rows)]})
    cfg = GRPOConfig(
        output_dir=a.out,
        per_device_train_batch_size=a.prompts_per_step * a.group,
        num_generations=a.group,
        max_completion_length=a.max_new,
        learning_rate=a.lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        beta=a.beta,
        loss_type="grpo",
        scale_rewards="group",
        temperature=1.0,
        num_iterations=1,
        max_steps=a.steps,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        seed=1,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    timer = StepTimer()
    trainer = GRPOTrainer(model=model, args=cfg, reward_funcs=reward_first_a, train_dataset=ds, processing_class=tok, callbacks=[timer])
    timer.t = time.perf_counter()
    trainer.train()
    sys.stdout.write(json.dumps({"step_seconds": timer.steps, "trl": trl.__version__, "torch": torch.__version__}) + "\n")


if __name__ == "__main__":
    main()
