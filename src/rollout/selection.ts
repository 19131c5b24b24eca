/**
 * Data selection of the RL loop, assembled from the config: which prompts a step draws
 * (prompt-sampler.ts: plain order, procedural curriculum, domain/level pools), which groups it
 * keeps (filters.ts: DAPO dynamic sampling, pass-rate band) and how many generation batches it may
 * use (dynamic-sampling.ts), and what it learns from each step (curriculum.ts, domain-weights.ts).
 *
 * The trainer (src/pipeline/state.ts) owns one `DataSelection` per run; its state is checkpointed
 * through `save()` / `restore()` (JSON), so a resumed run draws exactly the prompts an
 * uninterrupted run would have.
 */
import { getTask } from "../tasks/registry.ts";
import type { Task, Verdict } from "../tasks/types.ts";
import type { Example } from "../core/example.ts";
import { Rng, hash32 } from "../util/rng.ts";
import type { CurriculumConfig, DomainSamplingConfig, RolloutSelectionConfig } from "./config.ts";
import { initCurriculum, updateCurriculum, type CurriculumOptions, type CurriculumState } from "./curriculum.ts";
import { domainWeights, updateDomainRewards, type DomainRewards } from "./domain-weights.ts";
import { inPassBand, isInformative, metricValue, summarizeGroups, type FilterMetric, type PassBand } from "./filters.ts";
import { PromptPools, generatePrompts, type PoolCursors } from "./prompt-sampler.ts";

/** The JSON-serialisable state of a DataSelection (part of SavedRlState). */
export interface SavedSelection {
  curriculum: CurriculumState | null;
  domainRewards: DomainRewards | null;
  poolCursors: PoolCursors;
  /** Response tokens sampled by the RL stage so far (all generation batches). */
  sampledTokens: number;
}

/** Where a step's prompts come from: the trainer's shuffled order and its cursor (advanced here). */
export interface PromptCursor {
  order: number[];
  cursor: number;
}

export class DataSelection {
  /** DAPO filter metric, or null when dynamic sampling is off. */
  readonly dynamicMetric: FilterMetric | null;
  readonly band: PassBand | null;
  /** Generation batches a step may use (1 when no filter is on). */
  readonly maxGenBatches: number;
  readonly curriculum: (CurriculumOptions & { start: number }) | null;
  readonly domain: DomainSamplingConfig | null;
  /** The procedural task prompts are generated from (curriculum over a procedural task), else null. */
  private readonly task: Task | null;
  private readonly pools: PromptPools | null;
  private st: SavedSelection;

  /**
   * @throws Error (config error at rl.curriculum / rl.domainSampling) when the data cannot support
   *         the configured selection.
   */
  constructor(
    private readonly cfg: { seed: number; data: { task?: string; train?: string }; rl?: RolloutSelectionConfig },
    private readonly train: readonly Example[],
  ) {
    const r = cfg.rl!;
    const ds = r.dynamicSampling?.enabled ? r.dynamicSampling : null;
    this.dynamicMetric = ds ? ds.metric : null;
    const f = r.difficultyFilter;
    this.band = f?.enabled ? { low: f.low, high: f.high, open: f.open } : null;
    const gens = [ds ? ds.maxGenBatches : 1, this.band ? f!.maxGenBatches : 1];
    this.maxGenBatches = Math.max(...gens);
    this.domain = r.domainSampling?.enabled ? r.domainSampling : null;

    const c: CurriculumConfig | null = r.curriculum?.enabled ? r.curriculum : null;
    const procedural = cfg.data.task !== undefined && cfg.data.train === undefined;
    this.task = c && procedural ? getTask(cfg.data.task!) : null;
    if (c) {
      let range: { min: number; max: number };
      if (this.task) {
        const t = this.task.difficulties;
        range = { min: c.min ?? t.min, max: c.max ?? t.max };
        if (range.min < t.min || range.max > t.max) {
          throw new Error(`config error at rl.curriculum: task ${this.task.name} has difficulties ${t.min}..${t.max}, got min ${range.min}, max ${range.max}`);
        }
      } else {
        this.pools = new PromptPools(train, { byDomain: this.domain !== null, byLevel: true, seed: cfg.seed });
        const lr = this.pools.levelRange()!;
        range = { min: c.min ?? lr.min, max: c.max ?? lr.max };
      }
      if (range.min > range.max) throw new Error(`config error at rl.curriculum.max: need min ≤ max, got min ${range.min}, max ${range.max}`);
      this.curriculum = { ...range, window: c.window, raiseAbove: c.raiseAbove, lowerBelow: c.lowerBelow, step: c.step, start: c.start ?? range.min };
    } else this.curriculum = null;
    this.pools ??= this.domain ? new PromptPools(train, { byDomain: true, byLevel: false, seed: cfg.seed }) : null;
    if (this.domain && this.pools) {
      const K = this.pools.domains.length;
      if (K * this.domain.floor > 1) throw new Error(`config error at rl.domainSampling.floor: ${this.domain.floor} × ${K} domains exceeds 1; use at most ${(1 / K).toFixed(4)}`);
    }
    this.st = {
      curriculum: this.curriculum ? initCurriculum(this.curriculum.start, this.curriculum) : null,
      domainRewards: this.domain ? {} : null,
      poolCursors: {},
      sampledTokens: 0,
    };
  }

  /** Whether any group filter is on. */
  get filtering(): boolean {
    return this.dynamicMetric !== null || this.band !== null;
  }

  /** Current curriculum difficulty (null without a curriculum). */
  get difficulty(): number | null {
    return this.st.curriculum?.difficulty ?? null;
  }

  /** Current domain names and sampling weights (null without domain sampling). */
  weights(): { domains: string[]; p: number[] } | null {
    if (!this.domain || !this.pools) return null;
    const domains = this.pools.domains;
    return { domains, p: domainWeights(domains, this.st.domainRewards ?? {}, this.domain.floor) };
  }

  /**
   * The examples of generation batch `k` of RL step `step` (n prompts). Advances `cur.cursor`
   * (plain order; procedural generation index) or the pool cursors.
   */
  draw(cur: PromptCursor, n: number, step: number, k: number): Example[] {
    const d = this.difficulty;
    if (this.task && d !== null) {
      const out = generatePrompts(this.task, { seed: this.cfg.seed, start: cur.cursor, n, difficulty: d });
      cur.cursor += n;
      return out;
    }
    if (this.pools) {
      const w = this.weights();
      const idx = this.pools.draw(n, { cursors: this.st.poolCursors, rng: new Rng(hash32(this.cfg.seed, 0x64, step, k)), weights: w?.p, difficulty: d });
      return idx.map((i) => this.train[i]!);
    }
    const out: Example[] = [];
    for (let i = 0; i < n; i++) out.push(this.train[cur.order[cur.cursor++ % cur.order.length]!]!);
    return out;
  }

  /** Whether to train on a group, from its responses' verdicts (every filter that is on must keep it). */
  keep(verdicts: readonly Verdict[]): boolean {
    if (this.dynamicMetric !== null) {
      const vals = verdicts.map((v) => metricValue(v, this.dynamicMetric!));
      if (!isInformative(summarizeGroups(vals, vals.map(() => 0))[0]!)) return false;
    }
    if (this.band) {
      const acc = verdicts.map((v) => (v.correct ? 1 : 0));
      if (!inPassBand(summarizeGroups(acc, acc.map(() => 0))[0]!, this.band)) return false;
    }
    return true;
  }

  /**
   * Learn from one step's sampled responses (all generation batches, kept or not): the curriculum
   * sees their accuracy, the domain weights their per-task metric; count their tokens.
   * @returns metrics: curriculum/difficulty (the difficulty the next step draws at), curriculum/moved,
   *          domain/weight/<task> and domain/reward/<task> (after the update).
   */
  observe(examples: readonly Example[], verdicts: readonly Verdict[], tokens: number): Record<string, number> {
    const m: Record<string, number> = {};
    this.st.sampledTokens += tokens;
    if (this.st.curriculum && this.curriculum) {
      const acc = verdicts.length ? verdicts.filter((v) => v.correct).length / verdicts.length : Number.NaN;
      const u = updateCurriculum(this.st.curriculum, acc, this.curriculum);
      this.st.curriculum = u.state;
      m["curriculum/difficulty"] = u.state.difficulty;
      m["curriculum/moved"] = u.moved;
    }
    if (this.domain && this.st.domainRewards) {
      const by = new Map<string, number[]>();
      verdicts.forEach((v, i) => {
        const t = examples[i]!.task;
        let xs = by.get(t);
        if (!xs) by.set(t, (xs = []));
        xs.push(metricValue(v, this.domain!.metric));
      });
      this.st.domainRewards = updateDomainRewards(this.st.domainRewards, by, this.domain.smoothing);
      const w = this.weights()!;
      w.domains.forEach((d, i) => {
        m[`domain/weight/${d}`] = w.p[i]!;
        m[`domain/reward/${d}`] = this.st.domainRewards![d] ?? Number.NaN;
      });
    }
    return m;
  }

  /** Response tokens sampled so far. */
  get sampledTokens(): number {
    return this.st.sampledTokens;
  }

  save(): SavedSelection {
    return JSON.parse(JSON.stringify(this.st)) as SavedSelection;
  }

  /** Continue from a saved state (a checkpoint written before these fields existed restores nothing). */
  restore(saved: SavedSelection | undefined): void {
    if (!saved) return;
    this.st = {
      curriculum: this.curriculum ? (saved.curriculum ?? this.st.curriculum) : null,
      domainRewards: this.domain ? (saved.domainRewards ?? {}) : null,
      poolCursors: { ...saved.poolCursors },
      sampledTokens: saved.sampledTokens ?? 0,
    };
  }
}
