"""Baseline for `npm run bench -- real` (bench/real.ts): TRL's GRPOTrainer on SmolLM2-135M-Instruct
with the real-model recipe's settings: word-problems rows as chat messages (the model's own
template, generation prompt added), prompts x group per step, max new tokens, temperature 1,
learning rate, no KL term, one update per generation batch, full fine-tune or LoRA (peft).

Reward: 1 when the number after the last "####" (else the last number) equals the row's answer.
Prints one JSON line {"step_seconds": [...], "generate_seconds": [...], "trl": version, "torch":
version} on stdout; generate_seconds is the time inside transformers' generate() each step (the
sampling part; the rest of the step is scoring, the loss, backward and the optimizer).
Run with python/.venv-bench (torch==2.13.0, transformers, trl, datasets, peft).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from typing import Any, List

import torch
import trl
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

from trl_grpo import StepTimer  # the step timer of the tiny-model baseline (same folder)


def final_number(text: str) -> str:
    tail = text.rsplit("####", 1)[-1] if "####" in text else text
    nums = re.findall(r"-?\d+(?:\.\d+)?", tail.replace(",", ""))
    return nums[-1] if nums else ""


def reward_answer(completions: List[Any], answer: List[str], **kw: Any) -> List[float]:
    out = []
    for c, a in zip(completions, answer):
        text = c[-1]["content"] if isinstance(c, list) else str(c)
        out.append(1.0 if final_number(text) == a else 0.0)
    return out


class GenerateTimer:
    """Seconds spent inside transformers' GenerationMixin.generate (the innermost generate a
    PeftModel's generate calls), read and reset once per step by `take`."""

    def __init__(self) -> None:
        from transformers.generation.utils import GenerationMixin

        self.seconds = 0.0
        inner = GenerationMixin.generate
        timer = self

        def timed(model: Any, *args: Any, **kw: Any) -> Any:
            t = time.perf_counter()
            try:
                return inner(model, *args, **kw)
            finally:
                timer.seconds += time.perf_counter() - t

        GenerationMixin.generate = timed  # type: ignore[method-assign]

    def take(self) -> float:
        s, self.seconds = self.seconds, 0.0
        return s


class SplitStepTimer(StepTimer):
    def __init__(self, gen: GenerateTimer) -> None:
        super().__init__()
        self.gen = gen
        self.generate: List[float] = []

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        super().on_step_end(args, state, control, **kw)
        self.generate.append(self.gen.take())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True, help="word-problems JSONL (prompt, answer)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--prompts-per-step", type=int, default=8)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--max-new", type=int, default=48)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--lr", type=float, default=1e-5)
    ap.add_argument("--lora-rank", type=int, default=0, help="0: full fine-tune")
    ap.add_argument("--lora-alpha", type=float, default=32)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(a.data) if l.strip()]
    n_rows = a.prompts_per_step * (a.steps + 1)
    rows = (rows * (n_rows // len(rows) + 1))[:n_rows]
    ds = Dataset.from_dict({"prompt": [[{"role": "user", "content": r["prompt"]}] for r in rows], "answer": [str(r["answer"]) for r in rows]})
    tok = AutoTokenizer.from_pretrained(a.model)
    model = AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.float32)
    peft_config = None
    if a.lora_rank > 0:
        from peft import LoraConfig

        peft_config = LoraConfig(r=a.lora_rank, lora_alpha=a.lora_alpha, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM")
    cfg = GRPOConfig(
        output_dir=a.out,
        per_device_train_batch_size=a.prompts_per_step * a.group,
        gradient_accumulation_steps=1,
        num_generations=a.group,
        max_completion_length=a.max_new,
        learning_rate=a.lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        beta=0.0,
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
        seed=a.seed,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    timer = SplitStepTimer(GenerateTimer())
    trainer = GRPOTrainer(model=model, args=cfg, reward_funcs=reward_answer, train_dataset=ds, processing_class=tok, callbacks=[timer], peft_config=peft_config)
    timer.t = time.perf_counter()
    trainer.train()
    sys.stdout.write(json.dumps({"step_seconds": timer.steps, "generate_seconds": timer.generate, "trl": trl.__version__, "torch": torch.__version__}) + "\n")


if __name__ == "__main__":
    main()
