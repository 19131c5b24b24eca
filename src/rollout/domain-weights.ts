/**
 * Domain-aware dynamic sampling (DADS; RuleReasoner, Liu, Li & Zheng 2025, arXiv:2506.08672):
 * when the training set mixes domains (here: `Example.task`), the probability of drawing a prompt
 * from each domain is updated from the domain's recent rewards, so domains the policy has not
 * mastered are drawn more often and solved ones less — but never to zero (a floor).
 *
 * Formulas as implemented here (the paper's idea; its exact constants may differ):
 *   EMA reward per domain, after a step in which domain d got rewards r (mean r̄_step):
 *     r̄_d ← r̄_step                          on the first observation of d
 *     r̄_d ← (1 − α) · r̄_d + α · r̄_step      afterwards (α = `smoothing`, in (0, 1])
 *   sampling weights over K domains (rewards clamped to [0, 1]; unseen domains count as r̄ = 0):
 *     u_d = 1 − r̄_d
 *     p_d = floor + (1 − K · floor) · u_d / Σ_e u_e      (uniform u when Σ u = 0)
 *   so Σ p = 1 and every p_d ≥ floor (needs K · floor ≤ 1).
 */

/** Per-domain reward history (checkpointed as is). null = not observed yet. */
export type DomainRewards = Record<string, number | null>;

/**
 * Fold one step's rewards into the per-domain EMA. Domains without rewards this step keep their
 * value; non-finite rewards are ignored. Returns a new object.
 * @param observed domain → rewards of this step's responses in that domain.
 * @param smoothing α in (0, 1]: weight of the newest step.
 */
export function updateDomainRewards(prev: DomainRewards, observed: ReadonlyMap<string, readonly number[]>, smoothing: number): DomainRewards {
  const out: DomainRewards = { ...prev };
  for (const [d, rs] of observed) {
    const finite = rs.filter((r) => Number.isFinite(r));
    if (finite.length === 0) continue;
    const m = finite.reduce((a, b) => a + b, 0) / finite.length;
    const old = out[d];
    out[d] = old === null || old === undefined ? m : (1 - smoothing) * old + smoothing * m;
  }
  return out;
}

/**
 * Sampling probability per domain (same order as `domains`).
 * @param domains the K domain names.
 * @param rewards EMA reward per domain (missing/null = 0: unexplored domains get the most weight).
 * @param floor   least probability of any domain, in [0, 1/K].
 * @throws RangeError when K = 0 or K · floor > 1.
 */
export function domainWeights(domains: readonly string[], rewards: DomainRewards, floor: number): number[] {
  const K = domains.length;
  if (K === 0) throw new RangeError("domainWeights: no domains");
  if (!(floor >= 0) || K * floor > 1 + 1e-12) throw new RangeError(`domainWeights: floor ${floor} × ${K} domains exceeds 1; use floor ≤ ${(1 / K).toFixed(4)}`);
  const u = domains.map((d) => 1 - Math.min(1, Math.max(0, rewards[d] ?? 0)));
  const s = u.reduce((a, b) => a + b, 0);
  const share = s > 0 ? u.map((x) => x / s) : u.map(() => 1 / K);
  return share.map((x) => floor + (1 - K * floor) * x);
}

/** Index drawn from probabilities `p` (Σ p = 1) with a uniform number `u` in [0, 1). */
export function drawIndex(p: readonly number[], u: number): number {
  let acc = 0;
  for (let i = 0; i < p.length; i++) {
    acc += p[i]!;
    if (u < acc) return i;
  }
  return p.length - 1;
}
