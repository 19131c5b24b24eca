/**
 * openEngine validates an `init` block when it opens: a partial init gets its defaults (and saves
 * a complete config.json), a wrong or unknown field is one config error naming it — at open,
 * not at save.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEngine } from "../../src/index.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";

const tokenizer = new CharTokenizer({ alphabet: "0123456789" });

test("a partial init opens with the defaults and saves a complete config", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-open-init-"));
  try {
    const engine = await openEngine({ init: { hiddenSize: 16, numHeads: 2 } }, { tokenizer });
    await engine.save(dir);
    await engine.close();
    const c = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    assert.deepEqual([c.hidden_size, c.num_attention_heads, c.num_hidden_layers, c.rope_theta, c.max_position_embeddings], [16, 2, 2, 10000, 64]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a wrong or unknown init field is a config error at open", async () => {
  await assert.rejects(openEngine({ init: { hiddenSize: "16" } } as never, { tokenizer }), /^UserError: config error at model\.init\.hiddenSize: .*, got "16"$/);
  await assert.rejects(openEngine({ init: { hiddenSize: 16, ropeTheta: -1 } }, { tokenizer }), /config error at model\.init\.ropeTheta: /);
  await assert.rejects(openEngine({ init: { hiddenSise: 16 } } as never, { tokenizer }), /config error at model\.init: unknown field\(s\) hiddenSise; fields: hiddenSize, /);
});
