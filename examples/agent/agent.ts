// A small agent written against the official `openai` SDK, as any TypeScript agent would be: it
// asks the model, reads the answer and says how well the episode went. It knows nothing about
// rlvr except two optional extras of `rlvr serve --capture`: the `x-rlvr-episode` / `x-rlvr-group`
// headers that file each call under an episode, and a POST that scores the episode.
//
// The toy task: "kite 3" → the answer must start with the digit (3). A tiny random model starts
// near chance (about 2% of its first characters are the right digit) and learns it from rewards.
import OpenAI from "openai";

export interface Task {
  digit: number;
  word: string;
}

const TRAIN_WORDS = ["kite", "moon", "tree", "fish", "rock", "lamp", "bird", "rain"];
const HELD_OUT_WORDS = ["sun", "door", "wave", "leaf"];

/** The tasks of a split: every digit 0..4 with each word (held-out words never appear in training). */
export function tasks(split: "train" | "test"): Task[] {
  const words = split === "train" ? TRAIN_WORDS : HELD_OUT_WORDS;
  return words.flatMap((word) => [0, 1, 2, 3, 4].map((digit) => ({ digit, word })));
}

/** Reward of an answer: 1 when it starts with the right digit, else 0. */
export function score(task: Task, answer: string): number {
  const c = answer.trimStart()[0];
  return c === String(task.digit) ? 1 : 0;
}

/** One episode: one chat call (filed under `episode` when given). Returns the answer and its reward. */
export async function runEpisode(client: OpenAI, model: string, task: Task, o: { episode?: string; group?: string; temperature?: number } = {}): Promise<{ answer: string; reward: number }> {
  const headers: Record<string, string> = {};
  if (o.episode) headers["x-rlvr-episode"] = o.episode;
  if (o.group) headers["x-rlvr-group"] = o.group;
  const res = await client.chat.completions.create(
    { model, messages: [{ role: "user", content: `${task.word} ${task.digit}` }], max_tokens: 2, temperature: o.temperature ?? 1 },
    { headers },
  );
  const answer = res.choices[0]?.message.content ?? "";
  return { answer, reward: score(task, answer) };
}

/** Held-out success rate: greedy answers to the test tasks that start with the right digit. */
export async function successRate(client: OpenAI, model: string): Promise<number> {
  const ts = tasks("test");
  const rs = await Promise.all(ts.map((t) => runEpisode(client, model, t, { temperature: 0 })));
  return rs.filter((r) => r.reward === 1).length / ts.length;
}
