// What `rlvr train` prints per held-out evaluation: pass@1 (and greedy) when several samples were
// taken per prompt, not the first sample's accuracy alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { heldOutLine } from "../../src/cli/commands/train.ts";

test("heldOutLine: pass@1 over the samples and greedy; a single sample prints its accuracy", () => {
  assert.equal(heldOutLine({ accuracy: 0.1797, meanAtN: 0.1738, samples: 4, greedy: 0.3633 }), "pass@1 17.4% (mean of 4 samples), greedy 36.3%");
  assert.equal(heldOutLine({ accuracy: 0.1797, meanAtN: 0.1738, samples: 4 }), "pass@1 17.4% (mean of 4 samples)");
  assert.equal(heldOutLine({ accuracy: 0.5, meanAtN: 0.5, samples: 1 }), "accuracy 50.0%");
});
