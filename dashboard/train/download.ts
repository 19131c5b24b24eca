/**
 * The checkpoint download: the Hugging Face-layout files (config.json, model.safetensors,
 * tokenizer files) in one zip under a folder of the model's name, built with fflate (stored, not
 * compressed: float32 weights barely compress) and handed to the browser as one download.
 */
import { zipSync } from "fflate";

/** Zip `files` (name → bytes) under `folder`/ and start the download of `<folder>.zip`. */
export function downloadZip(files: Record<string, Uint8Array>, folder: string): void {
  const zip = zipSync({ [folder]: files }, { level: 0 });
  const url = URL.createObjectURL(new Blob([zip as Uint8Array<ArrayBuffer>], { type: "application/zip" }));
  const a = Object.assign(document.createElement("a"), { href: url, download: `${folder}.zip` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
