/**
 * RAFT / rejection-sampling fine-tuning (Dong et al. 2023, arXiv:2304.06767): each step samples
 * the same prompts × group size as GRPO, keeps the best (or above-threshold) responses and takes
 * one SFT update on them at rl.lr. Options: `guided.raft`. Replaces the whole RL step.
 */
import type { RunConfig } from "../config/schema.ts";
import { raftStep, type RaftSelect } from "../guided/raft.ts";
import { defineMethod } from "./define.ts";

export const raft = defineMethod<RaftSelect>({
  name: "raft",
  configPath: "guided.raft",
  options: (cfg: RunConfig) => cfg.guided?.raft,
  needs: { synchronous: true },
  stages: ["step"],
  order: 10,
  build: (_ctx, sel) => ({ step: (c, a, st, log) => raftStep(c, a, st, log, sel) }),
});
