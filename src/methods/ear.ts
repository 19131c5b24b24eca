/**
 * ETTRL's entropy-based advantage reshaping (EAR, arXiv:2508.11356): scales each sequence's
 * advantage by its response entropy relative to its group. Options: `labelfree.ear`.
 * Transforms the advantages stage (sequence-level advantages only).
 */
import type { RunConfig } from "../config/schema.ts";
import { entropyAdvantageReshape, responseEntropy, type EarOptions } from "../labelfree/ear.ts";
import { defineMethod } from "./define.ts";

export const ear = defineMethod<EarOptions>({
  name: "ear",
  configPath: "labelfree.ear",
  options: (cfg: RunConfig) => (cfg.labelfree?.selfPlay?.enabled ? undefined : cfg.labelfree?.ear),
  needs: { groups: true, sequenceAdvantages: true },
  stages: ["advantages"],
  order: 10,
  build: (_ctx, o) => ({
    advantages: (adv, s) => entropyAdvantageReshape(adv, s.rollouts.map((r) => responseEntropy(r.logprobs)), s.rollouts.map((r) => r.promptIndex), o),
  }),
});
