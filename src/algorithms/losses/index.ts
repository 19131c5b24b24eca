/**
 * The built-in policy losses. Importing this module registers them all.
 */
import "./ppo-clip.ts";
import "./simple.ts";
import "./gspo.ts";
import "./cispo.ts";
import "./sapo.ts";
import "./topr.ts";
import "./gmpo.ts";
import "./bapo.ts";
import "./tinker.ts";

export { ppoClipLoss, ppoClipTerms } from "./ppo-clip.ts";
export { importanceSamplingLoss, vanillaPgLoss } from "./simple.ts";
export { gspoLoss, gspoTokenLoss } from "./gspo.ts";
export { cispoLoss } from "./cispo.ts";
export { sapoLoss, sapoToken } from "./sapo.ts";
export { toprLoss } from "./topr.ts";
export { gmpoLoss } from "./gmpo.ts";
export { bapoLoss, bapoClipBounds, type BapoBounds, type BapoOptions } from "./bapo.ts";
export { clippedSurrogate, clampedExp, LOG_RATIO_CLAMP } from "./common.ts";
export { tinkerLoss, registerTinkerLoss, getTinkerLoss, listTinkerLosses, tinkerCrossEntropy, tinkerImportanceSampling, tinkerPpo, tinkerCispo, tinkerDro, type TinkerLossInputs, type TinkerLossOutput, type TinkerLossEntry } from "./tinker.ts";
