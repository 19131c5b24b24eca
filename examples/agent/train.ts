// Train the model behind the agent (agent.ts) through `rlvr serve --capture`: run groups of
// episodes, score each (POST /v1/rlvr/episodes/{id}/reward), then ask the server for one RL
// update on the scored episodes (POST /v1/rlvr/train). Only the `openai` SDK and fetch are used.
//
//   rlvr serve <checkpoint> --capture --port 8000 &
//   npx tsx examples/agent/train.ts http://127.0.0.1:8000/v1 [steps]
import OpenAI from "openai";
import { runEpisode, successRate, tasks } from "./agent.ts";

export interface TrainAgentOptions {
  baseURL: string;
  /** RL steps (default 60). */
  steps?: number;
  /** Tasks per step (default 10) and attempts per task (a GRPO group; default 8). */
  tasksPerStep?: number;
  groupSize?: number;
  /** Learning rate of each update (default 0.003). */
  lr?: number;
  /** Entropy bonus coefficient (default 0.02: keeps the tiny model exploring instead of answering one digit to everything). */
  entropyCoef?: number;
  log?: (line: string) => void;
}

/** Run the loop; returns the held-out success rate before and after. */
export async function trainAgent(o: TrainAgentOptions): Promise<{ before: number; after: number; rewards: number[] }> {
  const client = new OpenAI({ baseURL: o.baseURL, apiKey: "unused", maxRetries: 0 });
  const model = (await client.models.list()).data[0]!.id;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${o.baseURL}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const log = o.log ?? ((l: string) => process.stdout.write(l + "\n"));
  const before = await successRate(client, model);
  log(`held-out success before: ${before.toFixed(2)}`);
  const train = tasks("train");
  const rewards: number[] = [];
  const steps = o.steps ?? 60;
  const K = o.tasksPerStep ?? 10;
  const G = o.groupSize ?? 8;
  for (let step = 0; step < steps; step++) {
    const batch = Array.from({ length: K }, (_, k) => train[(step * K + k) % train.length]!);
    const runs = batch.flatMap((task, k) =>
      Array.from({ length: G }, async (_, j) => {
        const episode = `s${step}-t${k}-a${j}`;
        const r = await runEpisode(client, model, task, { episode, group: `s${step}-t${k}` });
        await post(`/rlvr/episodes/${episode}/reward`, { reward: r.reward });
        return r.reward;
      }),
    );
    const rs = await Promise.all(runs);
    const mean = rs.reduce((s, x) => s + x, 0) / rs.length;
    rewards.push(mean);
    const algorithm = { advantage: { name: "grpo" }, loss: { name: "ppo_clip" }, mismatch: {}, entropy: { coef: o.entropyCoef ?? 0.02 } };
    const rep = await post("/rlvr/train", { lr: o.lr ?? 0.003, algorithm });
    log(`step ${step + 1}/${steps}: mean reward ${mean.toFixed(3)}, policy version ${rep.policyVersion}`);
  }
  const after = await successRate(client, model);
  log(`held-out success after: ${after.toFixed(2)}`);
  return { before, after, rewards };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const baseURL = process.argv[2] ?? "http://127.0.0.1:8000/v1";
  await trainAgent({ baseURL, steps: process.argv[3] ? Number(process.argv[3]) : undefined });
}
