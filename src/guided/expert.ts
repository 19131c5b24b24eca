/**
 * Expert trajectories for off-policy mixing (LUFFY, CHORD): demonstration Sequences marked as
 * expert tokens (weights 1) with the bookkeeping the losses in src/algorithms/guidance.ts read.
 */
import type { Example } from "../core/example.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Sequence } from "../core/sequence.ts";
import { demonstration } from "./sft.ts";

/**
 * An expert trajectory for LUFFY's mixed group: the demonstration's response, mask 1 and
 * weights 1 on every response token (the mixed-policy loss treats weights > 0 as off-policy),
 * oldLogprobs 0 (LUFFY takes the expert's probability as 1; the shaped term does not read them),
 * groupId = the on-policy group it joins.
 */
export function expertSequence(example: Example, encodePrompt: (e: Example) => Int32Array, tokenizer: Tokenizer, groupId: number, target?: string): Sequence {
  const d = demonstration(example, encodePrompt, tokenizer, target);
  const n = d.response.length;
  return { ...d, groupId, mask: new Float32Array(n).fill(1), weights: new Float32Array(n).fill(1), oldLogprobs: new Float32Array(n) };
}
