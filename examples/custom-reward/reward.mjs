// A user reward function for examples/custom-reward/config.yaml (docs/rewards.md, "A worked
// example"). The run imports this file and calls `score` once per sampled response.
//
// The task: "3,8,1>" -> "8" (the largest of three digits). Full reward for the right digit, a
// little for any digit that appears in the prompt (a valid but wrong pick), nothing otherwise.

/**
 * @param {string} response the sampled text (without the prompt)
 * @param {{ id: string, prompt: string, answer: string, meta?: Record<string, unknown> }} example the dataset row
 * @param {{ step?: number, options?: { partial?: number } }} ctx the training step and this component's options
 * @returns {{ reward: number, correct: boolean, extracted: string, reason: string } | null}
 */
export function score(response, example, ctx) {
  const digits = example.prompt.match(/\d/g);
  if (!digits) return null; // a row this reward cannot judge: skip the sample
  const got = response.trim();
  if (got === example.answer) return { reward: 1, correct: true, extracted: got, reason: "the largest digit" };
  const partial = ctx.options?.partial ?? 0.1;
  if (digits.includes(got)) return { reward: partial, correct: false, extracted: got, reason: "a digit of the prompt, not the largest" };
  return { reward: 0, correct: false, extracted: got, reason: "not a digit of the prompt" };
}
