/**
 * Compile a `reward:` block (./config.ts) into the run's reward: a composed reward function
 * (./compose.ts) over registered verifiers (./registry.ts), user modules (./user-module.ts) and
 * length shaping (./shaping/), plus the batch entry point the trainer calls.
 *
 * What a response gets (scoreBatch): a Verdict whose `reward` is the weighted, gated, shaped
 * total, whose `components` hold each component's value by name (after gating), and whose
 * `correct`/`extracted`/`reason` come from the primary component's verifier (`reward.correct`, by
 * default the first component that is not a format check). A verdict that does not say `correct`
 * itself (a reward function's bare number, `{reward}` alone, a group verifier's number) is correct
 * when its reward is at least `reward.correctAt` (default 1): partial credit never counts as accuracy. Failures never stop a run:
 *   - a verifier that throws, returns a wrong shape or a non-finite reward → the component's
 *     fallback (default 0) and the event `reward/errors/<component>`;
 *   - one that runs past its time limit → the fallback and `reward/timeouts/<component>`
 *     (in-process only async work can be stopped; with rl.verifierPool on, the pool stops any);
 *   - with the pool on, its totals are counted too (`verifier/timeouts|crashes|errors`);
 *   - a user function that returns null (or a component whose fallback is null) skips the
 *     sample: reward NaN (advantage 0, left out of group statistics) and `reward/skipped`.
 */
import type { Example } from "../core/example.ts";
import "./verifiers.ts";
import { preloadMath } from "./verifiers.ts";
import { composeRewards, countEvents, type RewardComponent, type RewardFn } from "./compose.ts";
import type { RewardConfig, RewardComponentConfig } from "./config.ts";
import { findVerifier, toVerdict, verifierNames, type Verifier } from "./registry.ts";
import { dapoOverlongPenalty } from "./shaping/overlong.ts";
import { cosineLengthReward } from "./shaping/cosine.ts";
import { grpoLambdaComponent } from "./shaping/grpo-lambda.ts";
import { loadRewardExport, moduleSpecifierOf, rewardExportSchema } from "./user-module.ts";
import { exampleIssue, type ExampleIssue } from "./example-schema.ts";
import type { ZodType } from "zod";
import type { VerifierPool } from "./pool/pool.ts";
import type { RewardEvent, RewardGroup, Verdict } from "./types.ts";
import { UserError } from "../util/errors.ts";
import { didYouMean } from "../util/suggest.ts";

export interface CompileOptions {
  /** Config path of the block, for messages (default "reward"). */
  at?: string;
  /** Folder that relative module paths resolve against (the config file's; default the working directory). */
  baseDir?: string;
  /** Default maxLength of length shaping (rl.maxNewTokens). */
  maxNewTokens?: number;
  /** The verifier pool to score in (rl.verifierPool on), created on first use; in-process when absent. */
  pool?: () => VerifierPool;
  /** Default time limit per call, ms (default: 10 000 for user modules, none for built-in verifiers in-process). */
  timeoutMs?: number;
  /** Default fallback reward (default 0). */
  fallback?: number | null;
  /** Receives the one-line warning at the first component failure (default: stderr). */
  warn?: (line: string) => void;
}

/**
 * A reward component failed (threw, returned a wrong shape, timed out, crashed its worker) on
 * more than `reward.maxErrorRate` of a batch's samples: the run stops with this one line
 * naming the component and its first error.
 */
export class RewardError extends UserError {
  override name = "RewardError";
}

/** What the trainer's reward stage passes besides responses and examples. */
export interface BatchInfo {
  /** Response lengths in tokens (default: characters). */
  lengths?: ArrayLike<number>;
  /** Whether each response was cut at the length cap. */
  truncated?: ArrayLike<boolean>;
  /** Group of each response (default: consecutive responses to the same example object). */
  groupIds?: ArrayLike<number>;
  /** The training step. */
  step?: number;
}

export interface ScoredBatch {
  verdicts: Verdict[];
  /**
   * Event counts: reward/errors/<c>, reward/timeouts/<c>, reward/skipped, verifier/*;
   * `verifier/errors` is every error of every component (in-process or in the pool).
   */
  events: Record<string, number>;
}

/** A row that does not match the schema of a verifier the reward will call (see CompiledReward.checkExample). */
export interface RewardExampleIssue extends ExampleIssue {
  /** The component whose verifier refused it. */
  component: string;
  /** That verifier's registry name. */
  verifier: string;
}

export interface CompiledReward {
  /** Component names, in order (each logged as `reward/<name>`). */
  names: string[];
  /** The component whose verdict gives correct/extracted/reason. */
  primary: string;
  /** The verifiers the block uses, by registry name. */
  verifiers: string[];
  /** The composed reward function (composeRewards). */
  fn: RewardFn<Example>;
  /** Score one response with the primary component's verifier and options (eval, hints). Never throws. */
  verifyOne(response: string, example: Example): Verdict | Promise<Verdict>;
  /**
   * Check an example against the `exampleSchema` of every component's verifier (the `task`
   * verifier: the example's own task's verifier; a module: its export's schema), before any
   * response to it is graded. Dataset loaders call it on each row (fail closed at load).
   * @returns null when every schema matches; else the first issue, with component and verifier
   */
  checkExample(example: Example): RewardExampleIssue | null;
  /**
   * Score a batch of responses (the RL step's reward stage). A failing sample gets its component's
   * fallback and is counted; the first failure is warned about once.
   * @throws RewardError when one component fails on more than `reward.maxErrorRate` of the samples
   */
  scoreBatch(responses: readonly string[], examples: readonly Example[], info?: BatchInfo): Promise<ScoredBatch>;
}

interface Part {
  name: string;
  /** Registry name of the verifier to call (the pool calls it by this name). */
  vname: string;
  verifier: Verifier<Example>;
  options: unknown;
  weight: number;
  gate?: RewardComponentConfig["gate"];
  /** Time limit per call, ms (undefined: none in-process, the pool's default in the pool). */
  timeoutMs: number | undefined;
  fallback: number | null;
  at: string;
  /** The example schema of the verifier (a module's export's), when it declares one. */
  schema?: ZodType;
  /** reward.correctAt: the reward at which a verdict without its own `correct` counts as correct. */
  correctAt: number;
}

/** Component names that would collide with the step's other reward/… metrics. */
const RESERVED = ["mean", "verifier", "skipped", "overlong_penalty", "errors", "timeouts"];

type Stash = WeakMap<RewardGroup<Example>, Map<string, (Verdict | undefined)[]>>;

function stashSet(stash: Stash, g: RewardGroup<Example>, name: string, i: number, v: Verdict): void {
  let m = stash.get(g);
  if (!m) stash.set(g, (m = new Map()));
  let a = m.get(name);
  if (!a) m.set(name, (a = []));
  a[i] = v;
}

/**
 * A verifier's verdict, checked: a wrong shape or a non-finite reward (other than NaN = skip)
 * throws; one without a boolean `correct` gets reward ≥ `correctAt`.
 */
function checked(v: unknown, who: string, correctAt: number): Verdict {
  if (v && typeof v === "object" && typeof (v as Verdict).reward === "number" && typeof (v as Verdict).correct === "boolean") {
    const r = (v as Verdict).reward;
    if (Number.isNaN(r) || Number.isFinite(r)) return v as Verdict;
  }
  return toVerdict(v, who, correctAt);
}

async function resolvePart(c: RewardComponentConfig, at: string, o: CompileOptions & { correctAt: number }): Promise<Part> {
  // User functions get a limit by default; built-in verifiers bound their own work (the code
  // sandbox's per-run limits) and get one only when set (or from the pool's default).
  const timeoutMs = c.timeoutMs ?? o.timeoutMs;
  const fallback = c.fallback !== undefined ? c.fallback : (o.fallback ?? 0);
  if (c.module !== undefined) {
    const spec = moduleSpecifierOf(c.module, o.baseDir);
    const exp = c.export ?? "default";
    try {
      await loadRewardExport(spec, exp); // fail at start, naming the module, not at step 1
    } catch (e) {
      throw new Error(`config error at ${at}.module: ${(e as Error).message}`);
    }
    return { name: c.name ?? exp, vname: "module", verifier: findVerifier("module")!, options: { module: spec, export: exp, options: c.options }, weight: c.weight, gate: c.gate, timeoutMs: timeoutMs ?? 10_000, fallback, at, schema: rewardExportSchema(spec, exp), correctAt: o.correctAt };
  }
  const v = findVerifier(c.verifier!);
  if (!v) throw new Error(`config error at ${at}.verifier: unknown verifier "${c.verifier}"; ${didYouMean(c.verifier!, verifierNames())}registered: ${verifierNames().join(", ")} (a plugin module can add more with registerVerifier/defineReward)`);
  v.checkOptions?.(c.options, `${at}.options`);
  if (c.verifier === "math") await preloadMath().catch(() => undefined);
  return { name: c.name ?? c.verifier!, vname: c.verifier!, verifier: v, options: c.options, weight: c.weight, gate: c.gate, timeoutMs, fallback, at, schema: v.exampleSchema, correctAt: o.correctAt };
}

/** The first schema issue of `example` over the parts' verifiers (see CompiledReward.checkExample). */
function checkParts(parts: readonly Part[], example: Example): RewardExampleIssue | null {
  for (const p of parts) {
    // The `task` verifier grades with the example's own task's verifier: check against that one's schema.
    const own = p.vname === "task" && example?.task && example.task !== "task" ? findVerifier(example.task) : undefined;
    const schema = own ? own.exampleSchema : p.schema;
    if (!schema) continue;
    const issue = exampleIssue(schema, example);
    if (issue) return { ...issue, component: p.name, verifier: own ? example.task : p.vname };
  }
  return null;
}

function inProcess(p: Part, stash: Stash): RewardComponent<Example> {
  const base = { name: p.name, weight: p.weight, gate: p.gate, onError: p.fallback, timeoutMs: p.timeoutMs };
  const who = `verifier "${p.vname}"`;
  if (p.verifier.group) {
    const group = p.verifier.group.bind(p.verifier);
    return {
      ...base,
      group: async (g) => {
        const exs = g.group.examples ?? g.group.responses.map(() => g.group.example);
        const vals = await group(g.group.responses, exs, { step: g.group.step, options: p.options, correctAt: p.correctAt, lengths: g.lengths, truncated: g.group.responses.map((_, i) => g.group.truncated?.[i] ?? false) });
        if (!Array.isArray(vals)) throw new Error(`${who}.group returned ${typeof vals}; expected one value per response`);
        return vals.map((x, i) => {
          if (x === null || typeof x === "number") return x;
          const v = checked(x, who, p.correctAt);
          stashSet(stash, g.group, p.name, i, v);
          return Number.isNaN(v.reward) ? null : v.reward;
        });
      },
    };
  }
  return {
    ...base,
    sample: async (s) => {
      const v = checked(await p.verifier.verify(s.response, s.example, { step: s.step, options: p.options, correctAt: p.correctAt }), who, p.correctAt);
      stashSet(stash, s.group, p.name, s.index, v);
      return Number.isNaN(v.reward) ? null : v.reward;
    },
  };
}

function inPool(p: Part, stash: Stash, pool: () => VerifierPool): RewardComponent<Example> {
  if (p.verifier.group) return inProcess(p, stash); // group verifiers see the whole group: they run here
  return {
    name: p.name,
    weight: p.weight,
    gate: p.gate,
    onError: p.fallback,
    sample: async (s) => {
      const o = await pool().run(p.vname, [s.response, s.example, { step: s.step, options: p.options, correctAt: p.correctAt }], { timeoutMs: p.timeoutMs });
      if (!o.ok) {
        s.emit(o.kind === "timeout" ? "verifier/timeouts" : o.kind === "crash" ? "verifier/crashes" : "verifier/errors", o.message);
        s.emit(o.kind === "timeout" ? `reward/timeouts/${p.name}` : `reward/errors/${p.name}`, o.message);
        return p.fallback;
      }
      const v = checked(o.value, `verifier "${p.vname}"`, p.correctAt); // throws → reward/errors/<name>, fallback
      stashSet(stash, s.group, p.name, s.index, v);
      return Number.isNaN(v.reward) ? null : v.reward;
    },
  };
}

/** A component as messages name it: `"name"`, with its verifier or module when that differs. */
function describePart(p: Part | undefined, name: string): string {
  if (!p) return `reward component "${name}"`;
  if (p.vname === "module") {
    const m = p.options as { module: string; export: string };
    return `reward component "${name}" (${m.module.split("/").pop()}#${m.export})`;
  }
  return `reward component "${name}"${p.vname !== name ? ` (verifier ${p.vname})` : ""}`;
}

/** First line of an error message, at most 200 characters. */
const firstLine = (m: string) => {
  const l = m.split("\n")[0]!;
  return l.length > 200 ? l.slice(0, 199) + "…" : l;
};

/**
 * Reward failures made loud: one warning at the first failure of any component, and a
 * RewardError when one component fails (errors + timeouts) on more than `maxErrorRate` of a batch.
 */
function errorWatch(maxErrorRate: number, warn: (line: string) => void, describe: (name: string) => string) {
  let warned = false;
  const warnOnce = (name: string, message: string, step: number | undefined) => {
    if (warned) return;
    warned = true;
    warn(
      `reward warning: ${describe(name)} failed${step !== undefined ? ` at RL step ${step + 1}` : ""}: ${firstLine(message)} ` +
        `(the sample gets the fallback reward; counted as reward/errors/${name}; the run stops when more than ${maxErrorRate} of a step's samples fail)`,
    );
  };
  const check = (events: readonly RewardEvent[], n: number, step: number | undefined) => {
    const failed = new Map<string, { count: number; first: string }>();
    for (const e of events) {
      const m = /^reward\/(errors|timeouts)\/(.+)$/.exec(e.name);
      if (!m) continue;
      const f = failed.get(m[2]!) ?? { count: 0, first: `${m[1] === "timeouts" ? "timeout: " : ""}${e.message ?? "(no message)"}` };
      f.count++;
      failed.set(m[2]!, f);
    }
    for (const [name, f] of failed) {
      warnOnce(name, f.first, step);
      if (n > 0 && f.count / n > maxErrorRate) {
        throw new RewardError(
          `reward error: ${describe(name)} failed on ${f.count} of ${n} samples${step !== undefined ? ` of RL step ${step + 1}` : ""} ` +
            `(more than reward.maxErrorRate ${maxErrorRate}); first error: ${firstLine(f.first)}`,
        );
      }
    }
  };
  return { warnOnce, check };
}

/**
 * Compile a reward block.
 * @param reward the validated block (rewardConfigSchema)
 * @returns the compiled reward (see CompiledReward)
 * @throws Error `config error at <at>…: …` for an unknown verifier (listing the registered ones),
 *   bad options, a module that cannot be loaded or lacks the export, an unknown gate or
 *   correctness component, or shaping without a length cap
 */
export async function compileReward(reward: RewardConfig, o: CompileOptions = {}): Promise<CompiledReward> {
  const at = o.at ?? "reward";
  const single = reward.components === undefined;
  const comps: RewardComponentConfig[] = single
    ? [{ verifier: reward.verifier, module: reward.module, export: reward.export, options: reward.options, weight: 1, timeoutMs: reward.timeoutMs, fallback: reward.fallback }]
    : reward.components!;
  const correctAt = reward.correctAt ?? 1;
  const defaults = { ...o, timeoutMs: reward.timeoutMs ?? o.timeoutMs, fallback: reward.fallback !== undefined ? reward.fallback : o.fallback, correctAt };
  const parts: Part[] = [];
  for (let i = 0; i < comps.length; i++) parts.push(await resolvePart(comps[i]!, single ? at : `${at}.components[${i}]`, defaults));
  const names = parts.map((p) => p.name);
  const reserved = parts.find((p) => RESERVED.includes(p.name) || /^(errors|timeouts)\//.test(p.name));
  if (reserved) throw new Error(`config error at ${reserved.at}: the component name "${reserved.name}" is taken by a metric (reward/${reserved.name}); set name: to another`);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new Error(`config error at ${at}.components: two components are named "${dup}"; give one a name:`);
  const primary = reward.correct ?? parts.find((p) => p.vname !== "format")?.name ?? parts[0]!.name;
  if (!names.includes(primary)) throw new Error(`config error at ${at}.correct: no component named "${primary}" (components: ${names.join(", ")})`);

  const stash: Stash = new WeakMap();
  const components: RewardComponent<Example>[] = parts.map((p) => (o.pool ? inPool(p, stash, o.pool) : inProcess(p, stash)));
  const cap = (m: number | undefined, i: number) => {
    const L = m ?? o.maxNewTokens;
    if (!L) throw new Error(`config error at ${at}.shaping[${i}].maxLength: set the length cap in tokens (there is no rl.maxNewTokens to default to)`);
    return L;
  };
  const correctness = (name: string | undefined, i: number) => {
    const n = name ?? primary;
    const c = components.find((x) => x.name === n);
    if (!c) throw new Error(`config error at ${at}.shaping[${i}].correctness: no component named "${n}" (components: ${names.join(", ")})`);
    c.weight = 0; // the shaped reward replaces it; it is still logged
    return n;
  };
  reward.shaping.forEach((sh, i) => {
    if (sh.type === "overlong") {
      const maxLength = cap(sh.maxLength, i);
      const buffer = Math.min(sh.buffer ?? Math.max(1, Math.round(sh.bufferFraction * maxLength)), maxLength);
      components.push({ name: sh.name, sample: (s) => dapoOverlongPenalty(s.length, maxLength, buffer, sh.factor) });
    } else if (sh.type === "cosine") {
      const maxLength = cap(sh.maxLength, i);
      const from = correctness(sh.correctness, i);
      components.push({
        name: sh.name,
        group: ({ group, lengths, components: vals }) =>
          lengths.map((len, k) => {
            const v = vals[from]![k];
            if (v === null || v === undefined) return null;
            const correct = stash.get(group)?.get(from)?.[k]?.correct ?? v >= correctAt;
            return cosineLengthReward(correct, len, { ...sh, maxLength }, group.truncated?.[k] ?? false);
          }),
      });
    } else {
      components.push(grpoLambdaComponent({ ...sh, correctness: correctness(sh.correctness, i), correctAt }));
    }
  });
  let fn: RewardFn<Example>;
  try {
    fn = composeRewards<Example>({ components });
  } catch (e) {
    throw new Error(`config error at ${(e as Error).message.replace(/^reward\b/, at)}`);
  }
  const allNames = components.map((c) => c.name);
  const watch = errorWatch(reward.maxErrorRate ?? 0.5, o.warn ?? ((l) => process.stderr.write(l + "\n")), (n) => describePart(parts.find((p) => p.name === n), n));
  const primaryPart = parts.find((p) => p.name === primary)!;

  const verifyOne = (response: string, example: Example): Verdict | Promise<Verdict> => {
    const fail = (e: unknown): Verdict => {
      watch.warnOnce(primary, (e as Error)?.message ?? String(e), undefined);
      return { correct: false, reward: primaryPart.fallback ?? NaN, extracted: null, reason: `error: ${(e as Error)?.message ?? String(e)}` };
    };
    try {
      const v = primaryPart.verifier.verify(response, example, { options: primaryPart.options, correctAt });
      if (v && typeof (v as Promise<Verdict>).then === "function") return (v as Promise<Verdict>).then((x) => checked(x, primaryPart.vname, correctAt), fail);
      return checked(v, primaryPart.vname, correctAt);
    } catch (e) {
      return fail(e);
    }
  };

  const scoreBatch = async (responses: readonly string[], examples: readonly Example[], info: BatchInfo = {}): Promise<ScoredBatch> => {
    const order = new Map<unknown, number[]>();
    responses.forEach((_, i) => {
      const key = info.groupIds ? info.groupIds[i] : examples[i];
      let a = order.get(key);
      if (!a) order.set(key, (a = []));
      a.push(i);
    });
    const idx = [...order.values()];
    const groups: RewardGroup<Example>[] = idx.map((ix) => ({
      prompt: examples[ix[0]!]!.prompt,
      responses: ix.map((i) => responses[i]!),
      example: examples[ix[0]!]!,
      examples: ix.map((i) => examples[i]!),
      lengths: info.lengths ? ix.map((i) => info.lengths![i]!) : undefined,
      truncated: info.truncated ? ix.map((i) => info.truncated![i]!) : undefined,
      step: info.step,
    }));
    const outs = await fn.batch(groups);
    watch.check(outs.flatMap((o) => o.events), responses.length, info.step);
    const verdicts = new Array<Verdict>(responses.length);
    const events: Record<string, number> = {};
    outs.forEach((out, gi) => {
      for (const [k, n] of Object.entries(countEvents(out.events))) events[k] = (events[k] ?? 0) + n;
      const prim = stash.get(groups[gi]!)?.get(primary);
      idx[gi]!.forEach((i, k) => {
        const total = out.total[k];
        const pv = prim?.[k];
        const compVals: Record<string, number> = {};
        for (const n of allNames) compVals[n] = out.components[n]?.[k] ?? NaN;
        const raw = out.raw[primary]?.[k];
        const failed = out.events.find((e) => e.index === k && e.name.endsWith(`/${primary}`));
        if (total === null || total === undefined) events["reward/skipped"] = (events["reward/skipped"] ?? 0) + 1;
        verdicts[i] = {
          correct: pv ? pv.correct : raw !== null && raw !== undefined && raw >= correctAt && !failed,
          reward: total ?? NaN,
          extracted: pv?.extracted ?? null,
          reason: pv?.reason ?? (failed ? `${failed.name}: ${failed.message ?? ""}` : total === null ? "skipped" : "no verdict"),
          components: compVals,
        };
      });
    });
    const errors = Object.entries(events).reduce((a, [k, n]) => (k.startsWith("reward/errors/") ? a + n : a), 0);
    if (errors > 0) events["verifier/errors"] = errors;
    return { verdicts, events };
  };

  const checkExample = (example: Example) => checkParts(parts, example);
  return { names: allNames, primary, verifiers: [...new Set(parts.map((p) => p.vname))], fn, verifyOne, checkExample, scoreBatch };
}

/**
 * Per-step reward metrics from a step's verdicts and events: `reward/<name>` = mean of
 * `components[name]` over the verdicts that have a finite value for it, the event counts
 * (`reward/errors/<c>`, `reward/timeouts/<c>`, `reward/skipped`, `verifier/*`), and
 * `reward/skipped` = 0 when nothing was skipped. The trainer's metrics stage logs these.
 */
export function rewardMetrics(verdicts: readonly Verdict[], events: Record<string, number> = {}): Record<string, number> {
  const sum: Record<string, number> = {};
  const n: Record<string, number> = {};
  for (const v of verdicts) {
    for (const [k, x] of Object.entries(v.components ?? {})) {
      if (!Number.isFinite(x)) continue;
      sum[k] = (sum[k] ?? 0) + x;
      n[k] = (n[k] ?? 0) + 1;
    }
  }
  const out: Record<string, number> = { "reward/skipped": 0 };
  for (const v of verdicts) for (const k of Object.keys(v.components ?? {})) out[`reward/${k}`] ??= n[k] ? sum[k]! / n[k]! : NaN;
  for (const [k, c] of Object.entries(events)) if (k.startsWith("reward/") || k.startsWith("verifier/")) out[k] = c;
  return out;
}
