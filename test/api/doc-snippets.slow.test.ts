/**
 * The TypeScript and JavaScript blocks of README.md and docs/*.md call the API as it is: every
 * block that imports rlvr type-checks against the package's entries, here mapped to the sources
 * (scripts/doc-snippets.mjs; .ci/run runs the same against the packed tarball). Fragments may use
 * names the prose defines; any other error fails.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
// @ts-expect-error a plain-JavaScript script without declarations
import { checkDocSnippets } from "../../scripts/doc-snippets.mjs";

test("doc code blocks that import rlvr type-check against its entries", { timeout: 600_000 }, () => {
  const { blocks, problems } = checkDocSnippets({ cwd: join(import.meta.dirname, "..", ".."), sources: true }) as { blocks: number; problems: string[] };
  assert.ok(blocks >= 8, `only ${blocks} blocks import rlvr`);
  assert.deepEqual(problems, []);
});
