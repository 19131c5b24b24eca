// TTRL's majority vote: ties, unparsable answers, normalisation, rewards per group, and the
// reward hook's independence from the labels.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { majorityVote, ttrlRewards } from "../../src/methods/majority.ts";
import { buildMethodHooks } from "../../src/methods/index.ts";
import { parseRunConfig } from "../../src/config/schema.ts";
import type { RunContext } from "../../src/pipeline/context.ts";
import type { RewardStage } from "../../src/pipeline/hooks.ts";
import { getTask } from "../../src/tasks/index.ts";
import type { Example } from "../../src/core/example.ts";

describe("majority vote", () => {
  it("plain majority; share counts unparsable responses in the denominator", () => {
    const v = majorityVote(["7", "3", "7", null, "7"]);
    assert.equal(v.label, "7");
    assert.equal(v.index, 0);
    assert.equal(v.count, 3);
    assert.equal(v.share, 3 / 5);
    assert.equal(v.unparsable, 1);
    assert.equal(v.tied, false);
  });
  it("ties: 'first' takes the earliest answer, 'none' gives no label", () => {
    const a = ["5", "9", "9", "5", null];
    const first = majorityVote(a, "first");
    assert.equal(first.label, "5");
    assert.equal(first.index, 0);
    assert.equal(first.tied, true);
    const none = majorityVote(a, "none");
    assert.equal(none.label, null);
    assert.equal(none.index, -1);
    assert.equal(none.tied, true);
    // A tie below the top does not count.
    assert.equal(majorityVote(["1", "1", "2", "3"], "none").label, "1");
  });
  it("unparsable answers never win, even when they are the most frequent", () => {
    const v = majorityVote([null, null, "", "  ", "4"]);
    assert.equal(v.label, "4");
    assert.equal(v.index, 4);
    assert.equal(v.unparsable, 4);
    const all = majorityVote([null, null, ""]);
    assert.equal(all.label, null);
    assert.equal(all.share, 0);
  });
  it("votes are compared after normalisation", () => {
    const v = majorityVote(["3.50", "$3.5$", "\\boxed{3.5}", "4", "4"]);
    assert.equal(v.label, "3.5");
    assert.equal(v.count, 3);
  });
});

describe("TTRL rewards", () => {
  it("1 for agreeing with the group's label, 0 otherwise and for unparsable; no label → all 0", () => {
    const { rewards, votes } = ttrlRewards(["2", "2", "3", null, /**/ null, null, null, null, /**/ "1", "8", "8", "1"], 4, { tie: "none" });
    assert.deepEqual([...rewards], [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(votes.map((v) => v.label), ["2", null, null]);
    const first = ttrlRewards(["1", "8", "8", "1"], 4, { tie: "first" });
    assert.deepEqual([...first.rewards], [1, 0, 0, 1]);
    assert.throws(() => ttrlRewards(["1", "2", "3"], 2), /groups of 2/);
  });

  it("minShare: a majority below the share gets no label and rewards 0; at or above it, plain TTRL", () => {
    // Shares: 3/4, 2/4 (tie broken by "first"), 1/4 (all different).
    const answers = ["5", "5", "5", "1", /**/ "2", "2", "3", "3", /**/ "1", "2", "3", "4"];
    const plain = ttrlRewards(answers, 4);
    assert.deepEqual([...plain.rewards], [1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0]);
    const half = ttrlRewards(answers, 4, { minShare: 0.5 });
    assert.deepEqual([...half.rewards], [1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(half.votes.map((v) => [v.label, v.share, v.index, v.lowShare ?? false]), [["5", 0.75, 0, false], ["2", 0.5, 0, false], [null, 0.25, 0, true]]);
    const strict = ttrlRewards(answers, 4, { minShare: 0.75 });
    assert.deepEqual([...strict.rewards], [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // Property: raising minShare never adds a reward, and every surviving reward is plain TTRL's.
    for (const m of [0, 0.3, 0.5, 0.6, 0.9, 1]) {
      const r = ttrlRewards(answers, 4, { minShare: m }).rewards;
      r.forEach((x, i) => assert.ok(x <= plain.rewards[i]!, `minShare ${m}, response ${i}`));
    }
  });

  it("config: minShare with EVOL-RL is an error naming the field", () => {
    const raw = {
      model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2 } },
      tokenizer: { type: "char", alphabet: "0123456789" },
      data: { task: "maximum" },
      rl: { steps: 1, groupSize: 4 },
      labelfree: { ttrl: { minShare: 0.5 }, evol: {} },
    };
    assert.throws(() => parseRunConfig(raw), /labelfree\.ttrl\.minShare/);
  });

  it("the reward hook never reads the labels; pseudo-label accuracy uses them for logging only", async () => {
    const cfg = parseRunConfig({
      model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2 } },
      tokenizer: { type: "char", alphabet: "0123456789,>" },
      data: { task: "maximum" },
      rl: { steps: 1, groupSize: 4 },
      labelfree: { ttrl: { trainOn: 2 } },
    });
    const task = getTask("maximum");
    const ctx = { cfg } as unknown as RunContext;
    const hooks = buildMethodHooks(ctx, cfg);
    const texts = ["7", "7", "3", "x", /**/ "9", "5", "5", "9"];
    const stage = (answers: string[]): RewardStage => {
      const examples: Example[] = answers.map((a, i) => ({ id: `m${i}`, prompt: "p>", answer: a, task: "maximum" }));
      return {
        step: 0, examples, prompts: [], rollouts: texts.map((_, i) => ({ promptIndex: Math.floor(i / 4), tokens: new Int32Array(1), logprobs: new Float32Array(1), stopReason: "completed" as const })),
        texts, verdicts: texts.map((t, i) => task.verify(t, examples[Math.floor(i / 4)]!)), rewards: new Float32Array(8),
        seqs: texts.map(() => ({ prompt: [1], response: [2] })),
      };
    };
    const right = stage(["7", "9"]);
    const wrong = stage(["3", "1"]);
    const a = (await hooks.rewards!(right))!;
    const b = (await hooks.rewards!(wrong))!;
    assert.deepEqual([...a.rewards!], [1, 1, 0, 0, 1, 0, 0, 1]);
    assert.deepEqual([...a.rewards!], [...b.rewards!], "rewards do not depend on the labels");
    assert.equal(a.metrics!["ttrl/label_acc"], 1);
    assert.equal(b.metrics!["ttrl/label_acc"], 0);
    // Train on the first 2 of each group of 4: the rest are masked out (they still voted).
    assert.deepEqual(right.seqs.map((q) => (q.mask ? Array.from(q.mask) : null)), [null, null, [0], [0], null, null, [0], [0]]);
    // minShare 0.75: both majorities hold 2 of 4 votes, so neither group is rewarded, but maj@k
    // still counts their majorities (label accuracy has no labelled group to average).
    const strict = buildMethodHooks(ctx, { ...cfg, methods: { ...cfg.methods!, ttrl: { ...cfg.methods!.ttrl!, minShare: 0.75 } } });
    const c = (await strict.rewards!(stage(["7", "9"])))!;
    assert.deepEqual([...c.rewards!], [0, 0, 0, 0, 0, 0, 0, 0]);
    assert.equal(c.metrics!["ttrl/low_share_frac"], 1);
    assert.equal(c.metrics!["ttrl/maj_at_k"], 1);
    assert.equal(a.metrics!["ttrl/maj_at_k"], 1);
  });

  it("config: trainOn above the group size is an error naming the field", () => {
    const raw = {
      model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2 } },
      tokenizer: { type: "char", alphabet: "0123456789" },
      data: { task: "maximum" },
      rl: { steps: 1, groupSize: 4 },
      labelfree: { ttrl: { trainOn: 8 } },
    };
    assert.throws(() => parseRunConfig(raw), /labelfree\.ttrl\.trainOn/);
  });
});
