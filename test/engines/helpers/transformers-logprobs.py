"""Per-token log-probs of token sequences under a Hugging Face checkpoint, via transformers.

Used by test/engines/embedded.test.ts only when `import torch, transformers` works (they are not
installed by default). Usage: python3 transformers-logprobs.py <checkpoint-dir> < sequences.json
where sequences.json is a JSON list of token-id lists. Prints a JSON list of per-token log-prob
lists in the engine contract's layout: entry t is log p(tok[t] | tok[:t]), entry 0 is 0.
"""
import json
import sys

import torch
from transformers import AutoModelForCausalLM


def main() -> None:
    model = AutoModelForCausalLM.from_pretrained(sys.argv[1], torch_dtype=torch.float64)
    model.eval()
    out = []
    with torch.no_grad():
        for seq in json.load(sys.stdin):
            ids = torch.tensor([seq], dtype=torch.long)
            logp = torch.log_softmax(model(input_ids=ids).logits[0], dim=-1)
            row = [0.0] + [logp[t - 1, seq[t]].item() for t in range(1, len(seq))]
            out.append(row)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
