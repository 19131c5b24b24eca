/** Self-play lives in src/methods/selfplay.ts (the runner, the learnability reward and the collect source). */
export { learnability, runProposal, seedProposal, selfPlayHooks, type ProposedTask } from "../methods/selfplay.ts";
