/**
 * Diagnostic: does a checkpoint write well-formed scratchpads on `addition-scratchpad`? Samples
 * held-out (test split) prompts greedily and at temperature 1 and prints, for each, the share of
 * responses that are well formed (marker, then an answer; every piece before it a note or the
 * restated problem), consistent (the notes are the right column sums), correct (the verifier's
 * outcome), truncated (hit --max-tokens), and the response length in characters (mean, min, max).
 * Used for docs/tasks.md ("addition-scratchpad").
 *
 *   npx tsx scripts/diagnostics/scratchpad-check.ts <checkpoint dir | run dir> [--prompts 128] [--digits 2] [--max-tokens 48] [--seed 1]
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openEngine } from "../../src/engines/open.ts";
import { loadTokenizer } from "../../src/tokenizers/index.ts";
import { generateExamples, parseScratchpad, scratchpadAdditionTask } from "../../src/tasks/index.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    prompts: { type: "string", default: "128" },
    digits: { type: "string", default: "2" },
    "max-tokens": { type: "string", default: "48" },
    seed: { type: "string", default: "1" },
  },
});
if (!positionals[0]) throw new Error("usage: scratchpad-check.ts <checkpoint dir | run dir> [--prompts N] [--digits D] [--max-tokens T] [--seed S]");
const dir = existsSync(join(positionals[0], "config.json")) ? positionals[0] : join(positionals[0], "checkpoints", "final");
const seed = Number(values.seed);
const maxNewTokens = Number(values["max-tokens"]);
const examples = generateExamples(scratchpadAdditionTask, { n: Number(values.prompts), seed, difficulty: Number(values.digits), split: "test" });
const tokenizer = await loadTokenizer(dir);
const engine = await openEngine({ path: dir }, { tokenizer, seed });
try {
  // the trainer's prompt encoding (src/trainer/context.ts): BOS, when the tokenizer has one, then the prompt
  const prompts = examples.map((e) => Int32Array.from(tokenizer.encode(e.prompt)));
  for (const temperature of [0, 1]) {
    const n = temperature === 0 ? 1 : 4;
    const out = await engine.sample({ prompts, n, maxNewTokens, temperature, seed, stopTokens: [tokenizer.eosId] });
    let wellFormed = 0;
    let consistent = 0;
    let correct = 0;
    let truncated = 0;
    const lengths: number[] = [];
    for (const r of out) {
      const ex = examples[r.promptIndex]!;
      const text = tokenizer.decode(Array.from(r.tokens).filter((t) => t !== tokenizer.eosId));
      const p = parseScratchpad(text, ex);
      wellFormed += p.wellFormed ? 1 : 0;
      consistent += p.consistent ? 1 : 0;
      correct += scratchpadAdditionTask.verify(text, ex).correct ? 1 : 0;
      truncated += r.stopReason === "max_tokens" ? 1 : 0;
      lengths.push(text.length);
    }
    const pct = (x: number) => `${((100 * x) / out.length).toFixed(1)}%`;
    const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length;
    console.log(
      `${temperature === 0 ? "greedy" : "T=1 (4 per prompt)"}: ${out.length} responses; well-formed ${pct(wellFormed)}, consistent notes ${pct(consistent)}, ` +
        `correct ${pct(correct)}, truncated ${pct(truncated)}; length ${mean.toFixed(1)} chars (min ${Math.min(...lengths)}, max ${Math.max(...lengths)})`,
    );
    const firstTwo = out.slice(0, 2 * n).filter((_, i) => i % n === 0);
    for (const r of firstTwo) console.log(`  ${examples[r.promptIndex]!.prompt}${tokenizer.decode(Array.from(r.tokens).filter((t) => t !== tokenizer.eosId))}`);
  }
} finally {
  await engine.close();
}
