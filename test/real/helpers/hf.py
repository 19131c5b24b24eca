"""transformers' side of the real-model tests (test/real): one model or tokenizer load per call.

Usage: python hf.py <op> <model-dir> < input.json ; prints JSON.
  tokenize  input: list of strings      → list of id lists (add_special_tokens=False)
  logprobs  input: list of id lists     → per-token log-probs, entry t = log p(tok[t] | tok[:t]), entry 0 = 0
                                          (float32, as the engines compute)
  generate  input: {"chats": [[{role, content}...]], "max_new_tokens": n}
                                        → greedy continuations (ids) under the directory's own
                                          generation_config.json (its eos decides where they stop)
"""
import json
import sys

import torch


def main() -> None:
    op, path = sys.argv[1], sys.argv[2]
    data = json.load(sys.stdin)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if op == "tokenize":
        tok = AutoTokenizer.from_pretrained(path)
        print(json.dumps([tok(s, add_special_tokens=False)["input_ids"] for s in data]))
        return
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    model.eval()
    if op == "logprobs":
        out = []
        with torch.no_grad():
            for seq in data:
                logp = torch.log_softmax(model(input_ids=torch.tensor([seq])).logits[0].float(), dim=-1)
                out.append([0.0] + [logp[t - 1, seq[t]].item() for t in range(1, len(seq))])
        print(json.dumps(out))
    elif op == "generate":
        tok = AutoTokenizer.from_pretrained(path)
        out = []
        for chat in data["chats"]:
            ids = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt")["input_ids"]
            with torch.no_grad():
                gen = model.generate(ids, do_sample=False, max_new_tokens=data["max_new_tokens"])
            out.append(gen[0, ids.shape[1]:].tolist())
        print(json.dumps(out))
    else:
        raise SystemExit(f"unknown op {op}")


if __name__ == "__main__":
    main()
