/**
 * Audit a reward before training on it: run the attack library (./attacks.ts) against a user's
 * own rows and reward config, and report every degenerate or adversarial response that scores
 * above 0 — each one is reward a policy can collect without solving the task
 * (`rlvr verify-audit --attack <dataset> --reward <spec>`, docs/rewards.md).
 */
import type { Example } from "../../core/example.ts";
import { compileReward, type CompiledReward } from "../compile.ts";
import { rewardConfigSchema, type RewardConfigInput } from "../config.ts";
import { ATTACKS, isReferenceAnswer, type Attack, type AttackCategory } from "./attacks.ts";

export { ATTACKS, ATTACK_NAMES, isReferenceAnswer, referencesOf, type Attack, type AttackCategory } from "./attacks.ts";

/** One attack response that scored above 0 on one row. */
export interface AuditFinding {
  attack: string;
  category: AttackCategory;
  /** 1-based position of the row in the audited examples. */
  row: number;
  /** The example's id (a loaded row's defaults to `<file stem>-<line>`). */
  id: string;
  /** The response, cut to 120 characters (JSON-escaped in the table). */
  response: string;
  /** The composed reward it got (> 0). */
  score: number;
  /** Each component's value, when the reward has several. */
  components?: Record<string, number>;
  /** The primary verifier's reason. */
  reason: string;
}

/** What auditReward found. */
export interface AuditReport {
  rows: number;
  /** Attacks run (after `only`). */
  attacks: number;
  /** Responses scored, over all rows (responses that are the reference itself are left out). */
  responses: number;
  /** Every response that scored above 0, in row then attack order. */
  findings: AuditFinding[];
  /** Attack names with at least one finding, and how many. */
  byAttack: Record<string, number>;
  /** Reward events while scoring (reward/errors/<c>, reward/timeouts/<c>, …): errors score the fallback. */
  events: Record<string, number>;
  elapsedMs: number;
}

export interface AuditOptions {
  /** Attacks to run (default: all of ATTACKS); names of ATTACKS or Attack objects of your own. */
  attacks?: readonly (string | Attack)[];
  /** Called after each row with (rows done, rows in all). */
  onRow?: (done: number, total: number) => void;
}

const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

/**
 * Run the attack library against `examples` under `reward` and report every response that scores
 * above 0. Each response is scored alone (its own group, length = characters), through the
 * reward's full composition (components, gates, shaping), exactly as a training step would.
 * @param examples the user's rows (each is first checked against the reward's example schemas)
 * @param reward a compiled reward (compileReward) or a reward block (`{verifier: "math"}`, `{components: […]}`, …)
 * @returns the findings (empty when the reward gave every attack 0) and counts
 * @throws Error naming the row and field when a row does not match a verifier's exampleSchema,
 *   or naming the attack when `opts.attacks` names an unknown one
 * @example const r = await auditReward(rows, { verifier: "math" }); if (r.findings.length) …
 */
export async function auditReward(examples: readonly Example[], reward: CompiledReward | RewardConfigInput, opts: AuditOptions = {}): Promise<AuditReport> {
  const t0 = performance.now();
  const compiled = "scoreBatch" in reward ? reward : await compileReward(rewardConfigSchema.parse(reward));
  const attacks = (opts.attacks ?? ATTACKS).map((a) => {
    if (typeof a !== "string") return a;
    const found = ATTACKS.find((x) => x.name === a);
    if (!found) throw new Error(`unknown attack "${a}"; attacks: ${ATTACKS.map((x) => x.name).join(", ")}`);
    return found;
  });
  examples.forEach((e, i) => {
    const issue = compiled.checkExample(e);
    if (issue) throw new Error(`row ${i + 1} (${e.id}): field "${issue.field}": ${issue.message} (verifier "${issue.verifier}"); fix the row before auditing it`);
  });
  const findings: AuditFinding[] = [];
  const events: Record<string, number> = {};
  let responses = 0;
  for (let i = 0; i < examples.length; i++) {
    const e = examples[i]!;
    const tried: { attack: Attack; response: string }[] = [];
    for (const attack of attacks) for (const response of attack.responses(e)) if (!isReferenceAnswer(response, e)) tried.push({ attack, response });
    responses += tried.length;
    const scored = await compiled.scoreBatch(
      tried.map((t) => t.response),
      tried.map(() => e),
      { groupIds: tried.map((_, k) => k), lengths: tried.map((t) => t.response.length), truncated: tried.map(() => false) },
    );
    for (const [k, n] of Object.entries(scored.events)) events[k] = (events[k] ?? 0) + n;
    scored.verdicts.forEach((v, k) => {
      if (!(v.reward > 0)) return;
      const comps = v.components && Object.keys(v.components).length > 1 ? v.components : undefined;
      findings.push({ attack: tried[k]!.attack.name, category: tried[k]!.attack.category, row: i + 1, id: e.id, response: clip(tried[k]!.response, 120), score: v.reward, ...(comps ? { components: comps } : {}), reason: clip(v.reason ?? "", 160) });
    });
    opts.onRow?.(i + 1, examples.length);
  }
  const byAttack: Record<string, number> = {};
  for (const f of findings) byAttack[f.attack] = (byAttack[f.attack] ?? 0) + 1;
  return { rows: examples.length, attacks: attacks.length, responses, findings, byAttack, events, elapsedMs: Math.round(performance.now() - t0) };
}

/**
 * The findings as a text table (attack, row, score, response), one line each, with a summary
 * line; "no attack scored above 0" when there are none.
 */
export function formatAuditReport(r: AuditReport, where = "rows"): string {
  const head = `audited ${r.rows} ${where} with ${r.attacks} attacks (${r.responses} responses) in ${(r.elapsedMs / 1000).toFixed(1)} s`;
  const errs = Object.entries(r.events).filter(([k]) => /errors|timeouts/.test(k)).map(([k, n]) => `${k} ${n}`);
  const note = errs.length ? `\nnote: ${errs.join(", ")} (those responses got the fallback reward)` : "";
  if (r.findings.length === 0) return `${head}\nno attack scored above 0${note}\n`;
  const rows = r.findings.map((f) => [f.attack, `${f.row} (${f.id})`, fmt(f.score), JSON.stringify(f.response)]);
  const cols = ["attack", "row", "score", "response"];
  const w = cols.map((c, j) => Math.min(40, Math.max(c.length, ...rows.map((x) => x[j]!.length))));
  const line = (x: string[]) => x.map((s, j) => (j === x.length - 1 ? s : clip(s, w[j]!).padEnd(w[j]!))).join("  ");
  const summary = Object.entries(r.byAttack).map(([a, n]) => `${a} ${n}`).join(", ");
  return `${head}\n${r.findings.length} attack response(s) scored above 0 — ${summary}\n\n${line(cols)}\n${rows.map(line).join("\n")}${note}\n`;
}

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(3));
