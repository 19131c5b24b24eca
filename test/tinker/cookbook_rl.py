"""tinker-cookbook's RL trainer against `rlvr tinker`, through the cookbook's own code.

The environment is the cookbook's arithmetic recipe (tinker_cookbook.recipes.math_rl.arithmetic_env:
ArithmeticEnv, a ProblemEnv, grouped by ProblemGroupBuilder), the prompt is rendered by the
cookbook's `role_colon` renderer over the model's own tokenizer (get_tokenizer), and training is
`tinker_cookbook.rl.train.main` with a `train.Config`. Only the dataset is ours: problems read from
a local JSONL file ({"x": int, "y": int} per line) instead of the recipe's generator.

Usage: cookbook_rl.py BASE_URL MODEL_DIR DATA_JSONL LOG_DIR
Prints one JSON line per line of the run's metrics.jsonl ({"check": "step", ...metrics}), one per
checkpoint in its checkpoints.jsonl ({"check": "checkpoint", ...}), then {"check": "done"}.
"""

import asyncio
import json
import sys
from collections.abc import Sequence
from functools import partial

import chz
from tinker_cookbook import renderers
from tinker_cookbook.recipes.math_rl.arithmetic_env import ArithmeticEnv
from tinker_cookbook.rl import train
from tinker_cookbook.rl.problem_env import ProblemGroupBuilder
from tinker_cookbook.rl.types import EnvGroupBuilder, RLDataset, RLDatasetBuilder
from tinker_cookbook.tokenizer_utils import get_tokenizer

BATCH_SIZE = 2  # problems (env groups) per step
GROUP_SIZE = 4  # rollouts per problem


def read_problems(path: str) -> list[tuple[int, int]]:
    """(x, y) pairs from a JSONL file; a line without two integers "x" and "y" is an error naming it."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            row = json.loads(line)
            if not (isinstance(row.get("x"), int) and isinstance(row.get("y"), int)):
                raise ValueError(f"{path}:{n}: expected integers \"x\" and \"y\", got {line.strip()}")
            out.append((row["x"], row["y"]))
    return out


class JsonlArithmeticDataset(RLDataset):
    """Batches of the cookbook's ArithmeticEnv groups over problems read from a file."""

    def __init__(self, problems: list[tuple[int, int]], renderer: renderers.Renderer):
        self.problems = problems
        self.renderer = renderer

    def get_batch(self, index: int) -> Sequence[EnvGroupBuilder]:
        rows = self.problems[index * BATCH_SIZE : (index + 1) * BATCH_SIZE]
        prefix = ArithmeticEnv.standard_fewshot_prefix()
        return [
            ProblemGroupBuilder(
                env_thunk=partial(ArithmeticEnv, x, y, convo_prefix=prefix, renderer=self.renderer),
                num_envs=GROUP_SIZE,
                dataset_name="jsonl_arithmetic",
            )
            for x, y in rows
        ]

    def __len__(self) -> int:
        return len(self.problems) // BATCH_SIZE


@chz.chz
class JsonlArithmeticBuilder(RLDatasetBuilder):
    path: str
    model_name_for_tokenizer: str
    renderer_name: str

    async def __call__(self) -> tuple[JsonlArithmeticDataset, None]:
        tokenizer = get_tokenizer(self.model_name_for_tokenizer)
        renderer = renderers.get_renderer(self.renderer_name, tokenizer=tokenizer)
        return JsonlArithmeticDataset(read_problems(self.path), renderer), None


def main() -> None:
    base_url, model_dir, data, log_dir = sys.argv[1:5]
    config = train.Config(
        learning_rate=1e-3,
        dataset_builder=JsonlArithmeticBuilder(path=data, model_name_for_tokenizer=model_dir, renderer_name="role_colon"),
        model_name=model_dir,
        recipe_name="rlvr_cookbook_test",
        renderer_name="role_colon",
        max_tokens=6,
        log_path=log_dir,
        eval_every=0,
        save_every=0,
        lora_rank=8,
        base_url=base_url,
    )
    asyncio.run(train.main(config))
    with open(f"{log_dir}/metrics.jsonl") as f:
        for line in f:
            print(json.dumps({"check": "step", **json.loads(line)}), flush=True)
    with open(f"{log_dir}/checkpoints.jsonl") as f:
        for line in f:
            print(json.dumps({"check": "checkpoint", **json.loads(line)}), flush=True)
    print(json.dumps({"check": "done"}), flush=True)


if __name__ == "__main__":
    main()
