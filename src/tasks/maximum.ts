/**
 * `maximum`: pick the largest of a list of digits. Prompt `"3,8,5>"`, answer `"8"`.
 *
 * The smallest reasoning task in the registry: the answer is one token of a character-level
 * tokenizer, so a policy that has never seen a demonstration still guesses right about 1 time in
 * 10, and RL alone (no SFT) learns it in tens of steps on a CPU — which makes it the task of the
 * end-to-end test that RL raises held-out accuracy. Difficulty = number of digits in the list
 * (2..8). Verifier: the integer at the start of the response equals the maximum (any response
 * that states the maximum first is accepted).
 */
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";
import { verifyLeadingInteger } from "./arithmetic.ts";

export const maximumTask: Task = {
  name: "maximum",
  difficulties: {
    min: 2,
    max: 8,
    default: 3,
    description: 'number of digits in the list; prompt like "3,8,5>" and the answer is the largest digit',
  },
  generate(g: GenerateOptions): Example {
    checkDifficulty("maximum", g.difficulty, 2, 8);
    return generateInSplit("maximum", g, (rng) => {
      const digits = Array.from({ length: g.difficulty }, () => rng.int(0, 9));
      const answer = String(Math.max(...digits));
      return { prompt: `${digits.join(",")}>`, answer, solution: answer, meta: { digits } };
    });
  },
  verify(response: string, example: Example): Verdict {
    return verifyLeadingInteger(response, example.answer);
  },
};
