/**
 * `rlvr verify-audit --attack <dataset> --reward <spec>`: run the attack library against a
 * dataset's rows under a reward and list every attack response that scores above 0
 * (src/rewards/audit). Exit code 1 when there is any.
 *
 * `--reward` is one of:
 *   - a registered verifier's name: `math`, `code`, `exact`, a task's, or one a `--plugin` registered;
 *   - a reward block in YAML/JSON flow style: `'{components: [{verifier: format, weight: 0.2}, {verifier: math}]}'`;
 *   - a reward module: `./my-reward.ts` or `./my-reward.ts#score`;
 *   - a run config (`.yaml`/`.yml`): its plugins, its reward (or data.verifier / data.task) and
 *     its data.preset / data.fields / data.task for reading the rows.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { loadPlugins, loadRunConfigFile } from "../../config/plugins.ts";
import { auditReward, formatAuditReport } from "../../rewards/audit/index.ts";
import { compileReward, type CompiledReward } from "../../rewards/compile.ts";
import { rewardConfigSchema } from "../../rewards/config.ts";
import { loadDataset, type LoadOptions } from "../../tasks/index.ts";

export interface AttackAuditOptions {
  reward?: string;
  plugin?: string[];
  preset?: LoadOptions["preset"];
  task?: string;
  /** Rows audited, from the top (default 100). */
  limit?: number;
  attacks?: string;
  onBadRow?: "error" | "skip";
  json?: boolean;
}

/** The reward and the row-reading options named by `--reward` (see the module comment). */
async function rewardOfSpec(spec: string): Promise<{ reward: CompiledReward; load: LoadOptions }> {
  if (/\.ya?ml$/i.test(spec)) {
    if (!existsSync(spec)) throw new Error(`--reward ${spec}: no such run config`);
    const { buildInProcessReward } = await import("../../trainer/context.ts");
    const cfg = await loadRunConfigFile(spec);
    return { reward: await buildInProcessReward(cfg), load: { preset: cfg.data.preset, fields: cfg.data.fields, task: cfg.data.task } };
  }
  let block: unknown;
  if (spec.trim().startsWith("{")) {
    try {
      block = parseYaml(spec);
    } catch (e) {
      throw new Error(`--reward: cannot parse the reward block (${(e as Error).message.split("\n")[0]})`);
    }
  } else if (/\.[cm]?[jt]s(#[\w$]+)?$/.test(spec)) {
    const [module, exp] = spec.split("#");
    block = { module: resolve(module!), ...(exp ? { export: exp } : {}) };
  } else block = { verifier: spec };
  const parsed = rewardConfigSchema.safeParse(block);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new Error(`--reward at ${["reward", ...i.path.map(String)].join(".")}: ${i.message}`);
  }
  return { reward: await compileReward(parsed.data, { at: "--reward", baseDir: process.cwd() }), load: {} };
}

/**
 * Run the command: load plugins, compile the reward, read the rows (checked against the reward's
 * example schemas), audit, print the table (or JSON).
 * @returns the number of findings (the caller sets the exit code)
 * @throws Error with a one-line message for a missing --reward, a bad spec, a plugin or row error
 */
export async function runAttackAudit(dataset: string, o: AttackAuditOptions, write: (s: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  if (!o.reward) throw new Error("rlvr verify-audit --attack: give --reward <verifier | reward block | module.ts[#export] | run config.yaml>");
  if (o.plugin?.length) await loadPlugins(o.plugin, process.cwd(), "--plugin");
  const { reward, load } = await rewardOfSpec(o.reward);
  const rows = await loadDataset(dataset, { ...load, ...(o.preset ? { preset: o.preset } : {}), ...(o.task ? { task: o.task } : {}), onBadRow: o.onBadRow ?? "error", limit: o.limit ?? 100, check: reward.checkExample });
  if (rows.skipped > 0) process.stderr.write(`rlvr verify-audit: skipped ${rows.skipped} bad row(s) of ${dataset}; the first, line ${rows.skippedRows[0]!.line}: ${rows.skippedRows[0]!.reason}\n`);
  if (rows.examples.length === 0) throw new Error(`rlvr verify-audit: no rows to audit in ${dataset}`);
  const attacks = o.attacks?.split(",").map((s) => s.trim()).filter(Boolean);
  const progress = process.stderr.isTTY ? (done: number, total: number) => process.stderr.write(`\rrlvr verify-audit: row ${done}/${total}${done === total ? "\n" : ""}`) : undefined;
  const report = await auditReward(rows.examples, reward, { attacks, onRow: progress });
  write(o.json ? JSON.stringify({ dataset, reward: o.reward, skippedRows: rows.skipped, ...report }, null, 2) + "\n" : formatAuditReport(report, `rows of ${dataset} under reward ${o.reward}`));
  return report.findings.length;
}
