/**
 * The registries: every advantage estimator and policy loss is a pure function registered under
 * its paper's name. A config names it; user code registers its own the same way (see
 * docs/algorithms.md, "Registering your own").
 */
import type { z } from "zod";
import type { PolicyLossFn, SequenceAdvantageFn, TokenAdvantageFn } from "./types.ts";

/** Registry entry of an advantage estimator. */
export type AdvantageEntry = (
  | { level: "sequence"; fn: SequenceAdvantageFn }
  | { level: "token"; fn: TokenAdvantageFn }
) & {
  schema?: z.ZodType | undefined;
  /**
   * Whether it compares a response with its group mates (GRPO, RLOO, …: a group of one gives no
   * signal) rather than normalising over the whole batch (REINFORCE++). Config validation refuses
   * `rl.groupSize: 1` with an estimator that needs groups.
   */
  needsGroups: boolean;
};

/** Registry entry of a policy loss. */
export interface PolicyLossEntry {
  fn: PolicyLossFn;
  /** Defaults merged under the user's `loss` block (e.g. GSPO's tiny clip range). */
  defaults: Record<string, unknown>;
  /** Optional zod schema of the loss-specific options (validated at config load). */
  schema?: z.ZodType | undefined;
  /**
   * Whether the loss needs every sequence of an optimizer update in one engine call (BAPO searches
   * its clip bounds over the whole update). Config validation refuses an `rl.microBatchSize` that
   * would split an update.
   */
  wholeBatch: boolean;
}

const advantages = new Map<string, AdvantageEntry>();
const losses = new Map<string, PolicyLossEntry>();

function checkName(kind: string, name: string): void {
  if (typeof name !== "string" || !/^[A-Za-z0-9_.:+-]+$/.test(name)) {
    throw new TypeError(`${kind} name must be a non-empty identifier (letters, digits, _ . : + -), got ${JSON.stringify(name)}`);
  }
}

/**
 * Register an advantage estimator under `name` (replaces an existing one of that name).
 * @param name  config name, e.g. "grpo".
 * @param fn    sequence-level `(input, options) => Float32Array[B]`, or token-level
 *              `(input, options) => Float32Array[B*T]` when `opts.level` is "token".
 * @param opts  `level` (default "sequence"); `schema`: zod schema of the options (the config's
 *              `advantage` block without `name`), validated by `resolveAlgorithm`; `needsGroups`
 *              (default true): compares responses within a prompt's group, so rl.groupSize 1 is refused.
 * @throws TypeError on a malformed name or a non-function.
 */
export function registerAdvantage(
  name: string,
  fn: SequenceAdvantageFn | TokenAdvantageFn,
  opts: { level?: "sequence" | "token"; schema?: z.ZodType; needsGroups?: boolean } = {},
): void {
  checkName("advantage estimator", name);
  if (typeof fn !== "function") throw new TypeError(`registerAdvantage("${name}"): fn must be a function`);
  advantages.set(name, { level: opts.level ?? "sequence", fn, schema: opts.schema, needsGroups: opts.needsGroups ?? true } as AdvantageEntry);
}

/**
 * Register a policy loss under `name` (replaces an existing one of that name).
 * @param fn    `(ctx: PolicyLossContext) => PolicyLossTerms`; see types.ts for the contract.
 * @param opts  `defaults`: values merged under the user's `loss` block (clipLow, clipHigh, own
 *              options); `schema`: zod schema of the whole `loss` block, validated at config load;
 *              `wholeBatch` (default false): needs each update's sequences in one engine call.
 * @throws TypeError on a malformed name or a non-function.
 */
export function registerPolicyLoss(
  name: string,
  fn: PolicyLossFn,
  opts: { defaults?: Record<string, unknown>; schema?: z.ZodType; wholeBatch?: boolean } = {},
): void {
  checkName("policy loss", name);
  if (typeof fn !== "function") throw new TypeError(`registerPolicyLoss("${name}"): fn must be a function`);
  losses.set(name, { fn, defaults: opts.defaults ?? {}, schema: opts.schema, wholeBatch: opts.wholeBatch ?? false });
}

/** The estimator registered as `name`. @throws Error naming the registered estimators. */
export function getAdvantage(name: string): AdvantageEntry {
  const e = advantages.get(name);
  if (!e) throw new Error(`unknown advantage estimator "${name}"; registered: ${listAdvantages().join(", ")}`);
  return e;
}

/** The policy loss registered as `name`. @throws Error naming the registered losses. */
export function getPolicyLoss(name: string): PolicyLossEntry {
  const e = losses.get(name);
  if (!e) throw new Error(`unknown policy loss "${name}"; registered: ${listPolicyLosses().join(", ")}`);
  return e;
}

/** Names of the registered advantage estimators, sorted. */
export function listAdvantages(): string[] {
  return [...advantages.keys()].sort();
}

/** Names of the registered policy losses, sorted. */
export function listPolicyLosses(): string[] {
  return [...losses.keys()].sort();
}

/** Whether an estimator is registered as `name`. */
export function hasAdvantage(name: string): boolean {
  return advantages.has(name);
}

/** Whether a policy loss is registered as `name`. */
export function hasPolicyLoss(name: string): boolean {
  return losses.has(name);
}
