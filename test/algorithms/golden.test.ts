// Golden vectors: every case of test/fixtures/golden.json (or the file named by RLVR_GOLDEN)
// reproduced to 1e-6 relative from float64 inputs, and to 1e-5 from float32 inputs (the
// engines' dtype; ALGORITHMS.md allows 1e-5 there).
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  aggregate,
  AGGREGATION_MODES,
  computeAdvantages,
  dapoOverlongPenalty,
  hasAdvantage,
  klToken,
  type AdvantageOptions,
  type AggregationMode,
} from "../../src/algorithms/index.ts";
import { assertAllClose, assertClose, tokenLoss } from "./helpers.ts";

const goldenPath = process.env["RLVR_GOLDEN"] ?? new URL("../fixtures/golden.json", import.meta.url);
const golden = JSON.parse(readFileSync(goldenPath, "utf8")) as { cases: Record<string, unknown> };
const cases = golden.cases as {
  advantages: { groups: number[][] } & Record<string, number[][]>;
  opo: { groups: number[][]; lengths: number[][]; advantages: number[][] };
  aggregation: { loss: number[][]; mask: number[][]; T: number } & Record<string, number>;
  policy_loss_token: ({ ratio: number; advantage: number } & Record<string, number>)[];
  kl: ({ logp: number; ref_logp: number } & Record<string, number>)[];
  dapo_overlong: { length: number; max_len: number; buffer: number; penalty: number; factor?: number }[];
};

/** Golden key → [estimator, options]. */
function estimatorFor(key: string): [string, AdvantageOptions] {
  if (key === "grpo_population_std") return ["grpo", { std: "population" }];
  if (hasAdvantage(key)) return [key, {}];
  throw new Error(`golden advantages key "${key}" maps to no registered estimator`);
}

/** Flatten groups into one batch; group ids are scrambled and the order optionally permuted. */
function batchOf(groups: number[][], permute: boolean, extra?: number[][]) {
  const rows: { g: number; r: number; x: number; gi: number; k: number }[] = [];
  groups.forEach((grp, gi) => grp.forEach((r, k) => rows.push({ g: 1000 - 7 * gi, r, x: extra ? extra[gi]![k]! : 0, gi, k })));
  if (permute) rows.reverse().sort((a, b) => ((a.gi * 7 + a.k * 3) % 5) - ((b.gi * 7 + b.k * 3) % 5));
  return rows;
}

describe("golden: advantages", () => {
  const { groups, ...estimators } = cases.advantages;
  for (const [key, expected] of Object.entries(estimators)) {
    for (const [dtype, rel] of [["float64", 1e-6], ["float32", 1e-5]] as const) {
      for (const permute of [false, true]) {
        it(`${key} (${dtype} rewards${permute ? ", shuffled order and ids" : ""})`, () => {
          const [name, options] = estimatorFor(key);
          // Estimators that need n ≥ 2 (passk_grpo) list only those groups.
          const used = expected.length === groups.length ? groups : groups.filter((g) => g.length >= 2);
          assert.equal(used.length, expected.length, `${key}: cannot match ${expected.length} expected groups to the input groups`);
          const rows = batchOf(used, permute);
          const rewards = dtype === "float64" ? Float64Array.from(rows, (x) => x.r) : Float32Array.from(rows, (x) => x.r);
          const out = computeAdvantages(name, { rewards, groupIds: Int32Array.from(rows, (x) => x.g) }, options);
          rows.forEach((row, i) => assertClose(out[i]!, expected[row.gi]![row.k]!, rel, dtype === "float64" ? 1e-12 : 1e-9, `${key} group ${row.gi} sample ${row.k}`));
        });
      }
    }
  }
});

describe("golden: opo", () => {
  for (const permute of [false, true]) {
    it(`length-weighted baseline${permute ? " (shuffled)" : ""}`, () => {
      const { groups, lengths, advantages } = cases.opo;
      const rows = batchOf(groups, permute, lengths);
      const out = computeAdvantages("opo", {
        rewards: Float64Array.from(rows, (x) => x.r),
        groupIds: Int32Array.from(rows, (x) => x.g),
        lengths: Int32Array.from(rows, (x) => x.x),
      });
      rows.forEach((row, i) => assertClose(out[i]!, advantages[row.gi]![row.k]!, 1e-6, 1e-12, `opo group ${row.gi} sample ${row.k}`));
    });
  }
});

describe("golden: aggregation", () => {
  const { loss, mask, T, ...modes } = cases.aggregation;
  const B = loss.length;
  const flat = (a: number[][]) => Float64Array.from(a.flat());
  for (const [mode, expected] of Object.entries(modes)) {
    it(mode, () => {
      assert.ok((AGGREGATION_MODES as readonly string[]).includes(mode), `unknown aggregation mode ${mode}`);
      const m = flat(mask);
      let tokens = 0;
      let sequences = 0;
      for (const row of mask) {
        const s = row.reduce((x, y) => x + y, 0);
        tokens += s;
        if (s > 0) sequences++;
      }
      const got = aggregate(mode as AggregationMode, flat(loss), m, B, loss[0]!.length, { tokens, sequences, maxResponseLength: T });
      assertClose(got, expected, 1e-6, 1e-12, mode);
    });
  }
});

/** Golden loss key → loss config. */
function lossFor(key: string): Record<string, unknown> & { name: string } {
  let m = /^ppo_clip_([\d.]+)(?:_([\d.]+))?(?:_dual_([\d.]+))?$/.exec(key);
  if (m) {
    const cfg: Record<string, unknown> & { name: string } = { name: "ppo_clip", clipLow: Number(m[1]), clipHigh: Number(m[2] ?? m[1]) };
    if (m[3]) cfg["dualClip"] = Number(m[3]);
    return cfg;
  }
  m = /^sapo_([\d.]+)_([\d.]+)$/.exec(key);
  if (m) return { name: "sapo", tauPos: Number(m[1]), tauNeg: Number(m[2]) };
  throw new Error(`golden policy_loss_token key "${key}" maps to no loss`);
}

describe("golden: per-token policy losses", () => {
  const rows = cases.policy_loss_token;
  const keys = Object.keys(rows[0]!).filter((k) => k !== "ratio" && k !== "advantage");
  for (const key of keys) {
    it(key, () => {
      const lp = rows.map((r) => Math.log(r.ratio));
      const terms = tokenLoss(lossFor(key), lp, rows.map(() => 0), rows.map((r) => r.advantage));
      assertAllClose(terms.loss, rows.map((r) => r[key]!), 1e-6, 1e-12, key);
    });
  }
});

describe("golden: KL estimators", () => {
  const rows = cases.kl;
  const keys = Object.keys(rows[0]!).filter((k) => k !== "logp" && k !== "ref_logp");
  for (const key of keys) {
    it(key, () => {
      assert.ok(["k1", "k2", "k3", "k3+"].includes(key), `unknown estimator ${key}`);
      for (const r of rows) assertClose(klToken(key as "k1", r.logp, r.logp, r.ref_logp)[0], r[key]!, 1e-6, 1e-12, `${key}(${r.logp}, ${r.ref_logp})`);
    });
  }
});

describe("golden: DAPO overlong penalty", () => {
  it("every row", () => {
    for (const r of cases.dapo_overlong) {
      assertClose(dapoOverlongPenalty(r.length, r.max_len, r.buffer, r.factor ?? 1), r.penalty, 1e-6, 1e-12, `length ${r.length}`);
    }
  });
});

describe("golden: file schema", () => {
  it("has no case this test does not check", () => {
    const known = ["advantages", "opo", "aggregation", "policy_loss_token", "kl", "dapo_overlong"];
    for (const k of Object.keys(golden.cases)) assert.ok(known.includes(k), `golden case "${k}" is not checked by golden.test.ts`);
  });
});
