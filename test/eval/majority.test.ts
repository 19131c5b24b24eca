import { test } from "node:test";
import assert from "node:assert/strict";
import { majAtK, majorityCorrect, majorityIndex, normalizeVoteAnswer, type Vote } from "../../src/eval/majority.ts";

const v = (extracted: string | null, correct: boolean): Vote => ({ extracted, correct });

test("normalizeVoteAnswer: whitespace, $, \\boxed, trailing period, number forms; signs kept", () => {
  assert.equal(normalizeVoteAnswer(" 42 "), "42");
  assert.equal(normalizeVoteAnswer("$42$"), "42");
  assert.equal(normalizeVoteAnswer("\\boxed{ 3.50 }"), "3.5");
  assert.equal(normalizeVoteAnswer("1,000."), "1000");
  assert.equal(normalizeVoteAnswer("x = 3"), "x=3");
  assert.equal(normalizeVoteAnswer("\\left( 1, 2 \\right)"), "(1,2)");
  assert.equal(normalizeVoteAnswer("-3"), "-3");
  assert.notEqual(normalizeVoteAnswer("-3"), normalizeVoteAnswer("3"));
  assert.equal(normalizeVoteAnswer("Knight"), "knight");
  assert.equal(normalizeVoteAnswer("  "), null);
  assert.equal(normalizeVoteAnswer(null), null);
  assert.equal(normalizeVoteAnswer("１２"), "12"); // NFKC: full-width digits
});

test("majority vote: most frequent normalised answer; ties go to the earliest answer", () => {
  // "7" ×2 (wrong) beats "5" ×1 (right).
  assert.equal(majorityCorrect([v("5", true), v("7", false), v(" 7 ", false)]), 0);
  // Tie 1–1: the earliest answer ("5", right) wins; in the other order the wrong one wins.
  assert.equal(majorityCorrect([v("5", true), v("7", false)]), 1);
  assert.equal(majorityCorrect([v("7", false), v("5", true)]), 0);
  // Tie 2–2 decided by first appearance, not by which reaches 2 first.
  assert.equal(majorityIndex([v("a", false), v("b", true), v("b", true), v("a", false)]), 0);
  // Unanswered samples do not vote; all unanswered → no winner → 0.
  assert.equal(majorityIndex([v(null, false), v("9", true), v(null, false)]), 1);
  assert.equal(majorityCorrect([v(null, false), v(null, true)]), 0);
  // Normalisation merges "$1,000$" and "1000".
  assert.equal(majorityCorrect([v("12", false), v("$1,000$", true), v("1000", true)]), 1);
});

test("maj@k averages disjoint blocks of k; maj@1 is the answered-and-correct rate", () => {
  const votes = [v("1", true), v("2", false), v("2", false), v("1", true), v("1", true), v("3", false)];
  assert.equal(majAtK(votes, 1), 3 / 6);
  // blocks of 2: [1,2] → 1 (tie → earliest, right), [2,1] → 0, [1,3] → 1
  assert.equal(majAtK(votes, 2), 2 / 3);
  // blocks of 3: [1,2,2] → 0, [1,1,3] → 1
  assert.equal(majAtK(votes, 3), 1 / 2);
  // k = n: one block of all six: "1" ×3 beats "2" ×2
  assert.equal(majAtK(votes, 6), 1);
  // k that does not divide n uses ⌊n/k⌋ blocks: [1,2,2,1] → tie 2-2 → earliest "1" → 1
  assert.equal(majAtK(votes, 4), 1);
  assert.throws(() => majAtK(votes, 7), RangeError);
  assert.throws(() => majAtK(votes, 0), RangeError);
});
