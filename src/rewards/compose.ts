/**
 * Reward composition: a named, weighted set of components → one reward function over a group.
 *
 * Component kinds (exactly one of `sample`, `group`, `batch` per component):
 * - sample: f(sample) per response, sync or async (run concurrently);
 * - group:  f(group ctx) → one value per response, seeing the whole group and the values of every
 *           sample component and every earlier group component (majority voting, GRPO-λ's ratio);
 * - batch:  f(batch ctx) → values per group, seeing every group of a batch (top-λ selection).
 *           Calling the reward function on one group treats it as a batch of one.
 * Values: a number, a boolean (1/0), an object with numeric `reward` (a Verdict) or boolean
 * `correct`, or null = unscorable (as is NaN). A null in a component with weight ≠ 0 makes the sample's total
 * null (skip it); weight-0 components are logged only.
 * Gates: `gate: "correct"` (or `{component, min}`) counts the component only where the gate
 * component's value is ≥ min (default: > 0); elsewhere it contributes 0.
 * Errors: a throwing component gives `onError` (default 0) and an event "reward/errors/<name>";
 * `timeoutMs` bounds async components ("reward/timeouts/<name>"). For CPU-bound verifiers that
 * may hang, use poolComponent() (pool.ts) which can actually stop them.
 * Every component's values are returned separately (for per-component curves), raw and gated.
 */
import type { RewardEvent, RewardGroup } from "./types.ts";

export type RewardValue = number | boolean | null | undefined | { reward?: unknown; correct?: unknown };

/** What a sample component sees. */
export interface SampleContext<E = any> {
  /** The group the sample belongs to (read-only). */
  group: RewardGroup<E>;
  prompt: string;
  response: string;
  example: E;
  /** Length in tokens (characters when the group has no lengths). */
  length: number;
  truncated: boolean;
  /** Index within the group. */
  index: number;
  /** The training step, when the caller gave one. */
  step?: number;
  /** Record a counted event for this sample (e.g. "verifier/timeouts"). */
  emit(name: string, message?: string): void;
}

/** What a group component sees. */
export interface GroupContext<E = any> {
  group: RewardGroup<E>;
  lengths: number[];
  /** Values (raw, pre-gate) of the components computed so far. */
  components: Record<string, (number | null)[]>;
  emit(name: string, message?: string, index?: number): void;
}

/** What a batch component sees. */
export interface BatchContext<E = any> {
  groups: RewardGroup<E>[];
  lengths: number[][];
  components: Record<string, (number | null)[]>[];
}

export interface RewardComponent<E = any> {
  name: string;
  /** Weight in the total (default 1). 0 = logged only. */
  weight?: number;
  sample?: (s: SampleContext<E>) => RewardValue | Promise<RewardValue>;
  group?: (g: GroupContext<E>) => RewardValue[] | Promise<RewardValue[]>;
  batch?: (b: BatchContext<E>) => RewardValue[][] | Promise<RewardValue[][]>;
  /** Count this component only where another component passes. */
  gate?: string | { component: string; min?: number };
  /** Value when the component throws or times out (default 0; null = skip the sample). */
  onError?: number | null;
  /** Time limit for an async component, ms (default none). */
  timeoutMs?: number;
}

export interface RewardSpec<E = any> {
  components: RewardComponent<E>[];
}

export interface RewardOutput {
  /** Weighted sum per response; null = unscorable, skip the sample. */
  total: (number | null)[];
  /** Value per component per response, after gating (what enters the total, before weighting). */
  components: Record<string, (number | null)[]>;
  /** Value per component per response before gating. */
  raw: Record<string, (number | null)[]>;
  events: RewardEvent[];
}

export interface RewardFn<E = any> {
  (group: RewardGroup<E>): Promise<RewardOutput>;
  /** Score several groups at once (needed for batch components such as top-λ GRPO-λ). */
  batch(groups: RewardGroup<E>[]): Promise<RewardOutput[]>;
  readonly spec: RewardSpec<E>;
}

/** Coerce a component value to number | null (NaN/±Infinity → null). */
export function toValue(v: RewardValue): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "object") {
    if (typeof v.reward === "number") return Number.isFinite(v.reward) ? v.reward : null;
    if (typeof v.correct === "boolean") return v.correct ? 1 : 0;
  }
  return null;
}

function validate(spec: RewardSpec): void {
  const names = new Set<string>();
  spec.components.forEach((c, i) => {
    const at = `reward.components[${i}]`;
    if (!c.name) throw new Error(`${at}.name: expected a non-empty name`);
    if (names.has(c.name)) throw new Error(`${at}.name: "${c.name}" is used twice; names must be unique`);
    names.add(c.name);
    const kinds = [c.sample, c.group, c.batch].filter(Boolean).length;
    if (kinds !== 1) throw new Error(`${at} (${c.name}): set exactly one of sample, group, batch`);
    if (c.weight !== undefined && !Number.isFinite(c.weight)) throw new Error(`${at}.weight: expected a finite number, got ${c.weight}`);
  });
  spec.components.forEach((c, i) => {
    if (!c.gate) return;
    const g = typeof c.gate === "string" ? c.gate : c.gate.component;
    if (!names.has(g)) throw new Error(`reward.components[${i}].gate: no component named "${g}" (components: ${[...names].join(", ")})`);
    if (g === c.name) throw new Error(`reward.components[${i}].gate: a component cannot gate itself`);
  });
}

async function guarded<T>(c: RewardComponent, run: () => T | Promise<T>, events: RewardEvent[], index?: number): Promise<{ ok: true; v: T } | { ok: false }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const p = Promise.resolve().then(run);
    const v = c.timeoutMs
      ? await Promise.race([
          p,
          new Promise<never>((_, rej) => {
            timer = setTimeout(() => rej(new TimeoutMark()), c.timeoutMs);
          }),
        ])
      : await p;
    return { ok: true, v };
  } catch (e) {
    const timeout = e instanceof TimeoutMark;
    events.push({
      name: timeout ? `reward/timeouts/${c.name}` : `reward/errors/${c.name}`,
      index,
      message: timeout ? `ran past ${c.timeoutMs} ms` : e instanceof Error ? e.message : String(e),
    });
    return { ok: false };
  } finally {
    if (timer) clearTimeout(timer);
  }
}
class TimeoutMark extends Error {}

const fallbackOf = (c: RewardComponent) => (c.onError === undefined ? 0 : c.onError);

async function perGroup(spec: RewardSpec, group: RewardGroup, events: RewardEvent[]): Promise<{ lengths: number[]; raw: Record<string, (number | null)[]> }> {
  const n = group.responses.length;
  const lengths = group.responses.map((r, i) => group.lengths?.[i] ?? [...r].length);
  const raw: Record<string, (number | null)[]> = {};
  await Promise.all(
    spec.components
      .filter((c) => c.sample)
      .map(async (c) => {
        raw[c.name] = await Promise.all(
          group.responses.map(async (response, index) => {
            const ctx: SampleContext = {
              group,
              prompt: group.prompt,
              response,
              example: group.examples?.[index] ?? group.example,
              length: lengths[index]!,
              truncated: group.truncated?.[index] ?? false,
              index,
              step: group.step,
              emit: (name, message) => void events.push({ name, index, message }),
            };
            const r = await guarded(c, () => c.sample!(ctx), events, index);
            return r.ok ? toValue(r.v) : fallbackOf(c);
          }),
        );
      }),
  );
  for (const c of spec.components.filter((x) => x.group)) {
    const emit = (name: string, message?: string, index?: number) => void events.push({ name, index, message });
    const r = await guarded(c, () => c.group!({ group, lengths, components: { ...raw }, emit }), events);
    raw[c.name] = groupValues(c, r, n, events);
  }
  return { lengths, raw };
}

function groupValues(c: RewardComponent, r: { ok: true; v: RewardValue[] } | { ok: false }, n: number, events: RewardEvent[]): (number | null)[] {
  if (!r.ok) return new Array(n).fill(fallbackOf(c));
  if (!Array.isArray(r.v) || r.v.length !== n) {
    events.push({ name: `reward/errors/${c.name}`, message: `expected ${n} values, got ${Array.isArray(r.v) ? r.v.length : typeof r.v}` });
    return new Array(n).fill(fallbackOf(c));
  }
  return r.v.map(toValue);
}

function totals(spec: RewardSpec, raw: Record<string, (number | null)[]>, n: number): Pick<RewardOutput, "total" | "components"> {
  const components: Record<string, (number | null)[]> = {};
  for (const c of spec.components) {
    const vals = raw[c.name] ?? new Array(n).fill(null);
    if (!c.gate) {
      components[c.name] = vals.slice();
      continue;
    }
    const g = typeof c.gate === "string" ? { component: c.gate, min: undefined } : c.gate;
    const gv = raw[g.component] ?? [];
    components[c.name] = vals.map((v, i) => {
      const pass = gv[i] !== null && gv[i] !== undefined && (g.min === undefined ? gv[i]! > 0 : gv[i]! >= g.min);
      return pass ? v : 0;
    });
  }
  const total = new Array<number | null>(n).fill(0).map((_, i) => {
    let sum = 0;
    for (const c of spec.components) {
      const w = c.weight ?? 1;
      if (w === 0) continue;
      const v = components[c.name]![i];
      if (v === null || v === undefined) return null;
      sum += w * v;
    }
    return sum;
  });
  return { total, components };
}

/**
 * Build a reward function from a spec.
 * @throws Error naming the field (reward.components[i].…) when the spec is invalid
 * @returns RewardFn(group) → {total, components, raw, events}; `.batch(groups)` for batch components
 */
export function composeRewards<E = any>(spec: RewardSpec<E>): RewardFn<E> {
  validate(spec);
  const batchComponents = spec.components.filter((c) => c.batch);
  const runBatch = async (groups: RewardGroup<E>[]): Promise<RewardOutput[]> => {
    const eventsPer: RewardEvent[][] = groups.map(() => []);
    const parts = await Promise.all(groups.map((g, i) => perGroup(spec, g, eventsPer[i]!)));
    for (const c of batchComponents) {
      const shared: RewardEvent[] = [];
      const r = await guarded(c, () => c.batch!({ groups, lengths: parts.map((p) => p.lengths), components: parts.map((p) => ({ ...p.raw })) }), shared);
      groups.forEach((g, gi) => {
        const n = g.responses.length;
        let vals: (number | null)[];
        if (!r.ok) vals = new Array(n).fill(fallbackOf(c));
        else if (!Array.isArray(r.v) || r.v.length !== groups.length) {
          shared.push({ name: `reward/errors/${c.name}`, message: `expected values for ${groups.length} groups` });
          vals = new Array(n).fill(fallbackOf(c));
        } else vals = groupValues(c, { ok: true, v: r.v[gi]! }, n, eventsPer[gi]!);
        parts[gi]!.raw[c.name] = vals;
      });
      if (shared.length) eventsPer[0]!.push(...shared);
    }
    return groups.map((g, gi) => {
      const raw = parts[gi]!.raw;
      return { ...totals(spec, raw, g.responses.length), raw, events: eventsPer[gi]! };
    });
  };
  const fn = (async (group: RewardGroup<E>) => (await runBatch([group]))[0]!) as RewardFn<E>;
  fn.batch = runBatch;
  Object.defineProperty(fn, "spec", { value: spec });
  return fn;
}

/** Count events by name, e.g. {"verifier/timeouts": 2}. */
export function countEvents(events: RewardEvent[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of events) out[e.name] = (out[e.name] ?? 0) + 1;
  return out;
}
