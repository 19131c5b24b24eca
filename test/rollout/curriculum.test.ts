import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { initCurriculum, updateCurriculum, type CurriculumOptions } from "../../src/rollout/curriculum.ts";

const o: CurriculumOptions = { min: 2, max: 5, window: 3, raiseAbove: 0.8, lowerBelow: 0.3, step: 1 };

function run(accs: number[], start = 2) {
  let st = initCurriculum(start, o);
  const ds: number[] = [];
  for (const a of accs) {
    st = updateCurriculum(st, a, o).state;
    ds.push(st.difficulty);
  }
  return ds;
}

describe("curriculum", () => {
  it("raises once the rolling mean over a full window reaches raiseAbove, then waits a window", () => {
    assert.deepEqual(run([0.9, 0.9, 0.8, 0.9, 0.9, 0.9]), [2, 2, 3, 3, 3, 4]);
  });

  it("does not raise on a high step while the window mean is below the threshold", () => {
    assert.deepEqual(run([0.5, 0.9, 0.9, 0.95]), [2, 2, 2, 3]);
  });

  it("lowers when the rolling mean falls to lowerBelow, and never leaves [min, max]", () => {
    assert.deepEqual(run([0.1, 0.2, 0.3, 0.0, 0.0, 0.0], 4), [4, 4, 3, 3, 3, 2]);
    assert.deepEqual(run([0, 0, 0, 0, 0, 0], 2), [2, 2, 2, 2, 2, 2], "stays at min");
    assert.deepEqual(run([1, 1, 1, 1, 1, 1], 5), [5, 5, 5, 5, 5, 5], "stays at max");
  });

  it("reports the move, ignores non-finite accuracy, clamps the start and checks its options", () => {
    let st = initCurriculum(9, o);
    assert.equal(st.difficulty, 5);
    st = updateCurriculum(st, Number.NaN, o).state;
    assert.deepEqual(st.recent, []);
    const u = updateCurriculum({ difficulty: 3, recent: [0, 0] }, 0, o);
    assert.equal(u.moved, -1);
    assert.equal(updateCurriculum({ difficulty: 3, recent: [1, 1] }, 1, o).moved, 1);
    assert.throws(() => initCurriculum(2, { ...o, lowerBelow: 0.9 }), RangeError);
    assert.throws(() => initCurriculum(2, { ...o, min: 6 }), RangeError);
  });

  it("a step size of 2 moves two levels, clamped at the bounds", () => {
    const o2 = { ...o, window: 1, step: 2 };
    let st = initCurriculum(2, o2);
    st = updateCurriculum(st, 1, o2).state;
    assert.equal(st.difficulty, 4);
    st = updateCurriculum(st, 1, o2).state;
    assert.equal(st.difficulty, 5);
  });
});
