// EVOL-RL's novelty reward (character n-gram Jaccard), ETTRL's entropy-based advantage reshaping,
// and the self-play runner and learnability reward.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { charNgrams, evolNovelty, evolRewards, jaccard, noveltyScores } from "../../src/methods/evol.ts";
import { entropyAdvantageReshape, responseEntropy } from "../../src/methods/ear.ts";
import { learnability, runProposal, seedProposal } from "../../src/methods/selfplay.ts";
import { Rng } from "../../src/util/rng.ts";

const text = fc.string({ maxLength: 12 });

describe("EVOL-RL novelty (char-n-gram Jaccard to group mates) and reward bands", () => {
  it("Jaccard: symmetric, in [0, 1], 1 on itself", () => {
    fc.assert(
      fc.property(text, text, fc.integer({ min: 1, max: 4 }), (a, b, n) => {
        const A = charNgrams(a, n);
        const B = charNgrams(b, n);
        const j = jaccard(A, B);
        assert.equal(j, jaccard(B, A));
        assert.ok(j >= 0 && j <= 1);
        assert.equal(jaccard(A, A), 1);
      }),
    );
  });
  it("novelty ∈ [0, 1]; a duplicate has novelty 0; a response sharing no n-gram has novelty 1; invariant to group order", () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 2, maxLength: 6 }), (ts) => {
        const nov = noveltyScores(ts);
        nov.forEach((x) => assert.ok(x >= 0 && x <= 1));
        const rev = noveltyScores([...ts].reverse());
        nov.forEach((x, i) => assert.ok(Math.abs(x - rev[ts.length - 1 - i]!) < 1e-12));
      }),
    );
    const n = noveltyScores(["abcdef", "abcdef", "uvwxyz"]);
    assert.deepEqual([...n], [0, 0, 1]);
    assert.deepEqual([...noveltyScores(["solo"])], [1]);
    // More shared n-grams → less novel.
    const m = noveltyScores(["12+34=46", "12+34=47", "99*9=891"]);
    assert.ok(m[2]! > m[0]!);
  });
  it("EVOL-RL reward bands: majority in [0.5, 1] above other answers in [−1, −0.5]; unparsable −1", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(0, 1, null), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 1, maxLength: 8 }), (xs) => {
        const r = evolRewards(xs.map((x) => x[0] as 0 | 1 | null), xs.map((x) => x[1]));
        xs.forEach(([m], i) => {
          if (m === null) assert.equal(r[i], -1);
          else if (m === 1) assert.ok(r[i]! >= 0.5 - 1e-6 && r[i]! <= 1 + 1e-6);
          else assert.ok(r[i]! >= -1 - 1e-6 && r[i]! <= -0.5 + 1e-6);
        });
      }),
    );
    const r = evolRewards([1, 1], [0.2, 0.8]);
    assert.ok(r[1]! > r[0]!, "within the majority, the more novel response earns more");
  });
  it("EVOL-RL bands are min–max normalised per class; equal novelties → midpoint; a class of one → its band's top", () => {
    const r = evolRewards([1, 1, 1, 0, 0, null], [0.1, 0.3, 0.2, 0.9, 0.4, 0.5]);
    assert.deepEqual([...r].map((x) => +x.toFixed(6)), [0.5, 1, 0.75, -0.5, -1, -1]);
    assert.deepEqual([...evolRewards([1, 1, 0, 0], [0.3, 0.3, 0.7, 0.7])], [0.75, 0.75, -0.75, -0.75]);
    assert.deepEqual([...evolRewards([1, 0], [0, 0])], [1, -0.5]);
    assert.deepEqual([...evolRewards([1, 1, 0], [0, 1, 0], 0.2)].map((x) => +x.toFixed(6)), [0.8, 1, -0.8]);
  });
  it("EVOL-RL novelty: ½·mean over the own class + ½·max over all parsable mates; unparsable responses take no part", () => {
    // a, b: majority; c: minority; d: unparsable (identical to a, but ignored).
    const texts = ["abcd", "abce", "xyzw", "abcd"];
    const cls = [1, 1, 0, null] as const;
    const u = evolNovelty(texts, cls, 3);
    const J = (x: string, y: string) => jaccard(charNgrams(x, 3), charNgrams(y, 3));
    assert.ok(Math.abs(u[0]! - (1 - (0.5 * J("abcd", "abce") + 0.5 * Math.max(J("abcd", "abce"), J("abcd", "xyzw"))))) < 1e-12);
    // c is alone in its class: its mean runs over every parsable mate.
    assert.ok(Math.abs(u[2]! - (1 - (0.5 * (J("xyzw", "abcd") + J("xyzw", "abce")) / 2 + 0.5 * Math.max(J("xyzw", "abcd"), J("xyzw", "abce"))))) < 1e-12);
    assert.ok(Number.isNaN(u[3]!));
    // meanWeight 0 is 1 − max similarity (noveltyScores) when every response is parsable.
    const ts = ["12+34=46", "12+34=47", "99*9=891", "1"];
    const a = evolNovelty(ts, [1, 0, 1, 0], 3, 0);
    noveltyScores(ts, 3).forEach((x, i) => assert.ok(Math.abs(x - a[i]!) < 1e-12));
    assert.deepEqual([...evolNovelty(["q", "r"], [1, null])].slice(0, 1), [1], "no parsable mate → novelty 1");
  });
});

describe("ETTRL entropy-based advantage reshaping (stand-in)", () => {
  it("α = 0 is the identity; signs kept; scale within [min, max]; extra sequences untouched", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: -30, max: 30 }).map((x) => x / 10), fc.integer({ min: 1, max: 400 }).map((x) => x / 100)), { minLength: 2, maxLength: 10 }), (xs) => {
        const adv = Float32Array.from([...xs.map((x) => x[0]), 0.7]);
        const H = xs.map((x) => x[1]);
        const g = xs.map((_, i) => i % 2);
        const id = entropyAdvantageReshape(adv, H, g, { alpha: 0, min: 0.5, max: 2 });
        assert.deepEqual([...id], [...adv]);
        const r = entropyAdvantageReshape(adv, H, g, { alpha: 1, min: 0.5, max: 2 });
        for (let i = 0; i < H.length; i++) {
          if (adv[i] === 0) continue;
          const s = r[i]! / adv[i]!;
          assert.ok(s >= 0.5 - 1e-5 && s <= 2 + 1e-5);
        }
        assert.equal(r[H.length], adv[H.length]);
      }),
    );
    // Lower entropy than the group → smaller step.
    const r = entropyAdvantageReshape(Float32Array.from([1, 1]), [0.5, 1.5], [0, 0], { alpha: 1, min: 0.1, max: 10 });
    assert.ok(Math.abs(r[0]! - 0.5) < 1e-6 && Math.abs(r[1]! - 1.5) < 1e-6);
    assert.equal(responseEntropy([-1, -3]), 2);
  });
});

describe("self-play runner and learnability", () => {
  it("maximum: digit lists within the size bounds; the runner computes the answer", () => {
    const t = runProposal("maximum", "3,8,5", 2, 6)!;
    assert.equal(t.example.prompt, "3,8,5>");
    assert.equal(t.example.answer, "8");
    assert.equal(t.items, 3);
    for (const bad of ["", "3", "3,,5", "35,1", "a,b", "3,8,5,1,2,3,4"]) assert.equal(runProposal("maximum", bad, 2, 6), null, bad);
  });
  it("arithmetic: expressions over + − × evaluated exactly", () => {
    assert.equal(runProposal("arithmetic", "3*7-2", 2, 4)!.example.answer, "19");
    assert.equal(runProposal("arithmetic", "2-9", 2, 4)!.example.answer, "-7");
    for (const bad of ["3*", "7", "1+2+3+4+5", "(1+2)", "1/2"]) assert.equal(runProposal("arithmetic", bad, 2, 4), null, bad);
  });
  it("seed proposals are always valid", () => {
    const rng = new Rng(5);
    for (let i = 0; i < 200; i++) {
      for (const k of ["maximum", "arithmetic"] as const) assert.ok(runProposal(k, seedProposal(k, rng, 2, 4), 2, 4));
    }
  });
  it("learnability 1 − 2|s − ½|: 0 for trivial or impossible tasks, 1 at s = ½", () => {
    assert.equal(learnability(0), 0);
    assert.equal(learnability(1), 0);
    assert.equal(learnability(0.5), 1);
    assert.ok(learnability(0.25) === learnability(0.75));
  });
});
