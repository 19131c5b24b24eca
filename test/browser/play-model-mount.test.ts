/**
 * `rlvr play --model`'s file serving: the model directory's listed files only, read-only under
 * /model/, with index.json listing them; a missing directory or required file is one line naming it.
 * (The page that fetches them: test/real/play-model.test.ts.)
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MODEL_PREFIX, playModelMount } from "../../src/cli/commands/play.ts";
import { startDashboardServer } from "../../src/dashboard/server.ts";

const tmp = mkdtempSync(join(tmpdir(), "rlvr-play-mount-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

test("the model's listed files are served under /model/ with index.json; nothing else is", async () => {
  const dir = join(tmp, "my-model");
  const site = join(tmp, "site");
  mkdirSync(dir);
  mkdirSync(site);
  writeFileSync(join(site, "index.html"), "<!doctype html>page");
  writeFileSync(join(dir, "config.json"), '{"model_type":"llama"}');
  writeFileSync(join(dir, "model.safetensors"), new Uint8Array([1, 2, 3, 250]));
  writeFileSync(join(dir, "tokenizer.json"), "{}");
  writeFileSync(join(dir, "secret.txt"), "not a model file");
  const mount = playModelMount(dir);
  assert.deepEqual(mount.files, ["config.json", "model.safetensors", "tokenizer.json"]);
  assert.equal(mount.label, "my-model");
  const d = await startDashboardServer([], site, { mount });
  try {
    const get = (p: string) => fetch(new URL(p, d.url));
    const index = await (await get(`${MODEL_PREFIX}index.json`)).json();
    assert.deepEqual(index, { label: "my-model", files: [{ name: "config.json", bytes: 22 }, { name: "model.safetensors", bytes: 4 }, { name: "tokenizer.json", bytes: 2 }] });
    const w = await get(`${MODEL_PREFIX}model.safetensors`);
    assert.equal(w.headers.get("content-length"), "4");
    assert.deepEqual([...new Uint8Array(await w.arrayBuffer())], [1, 2, 3, 250]);
    assert.equal((await get(`${MODEL_PREFIX}secret.txt`)).status, 404);
    assert.equal((await get(`${MODEL_PREFIX}..%2Fsite%2Findex.html`)).status, 404);
    assert.equal((await fetch(new URL(`${MODEL_PREFIX}config.json`, d.url), { method: "POST" })).status, 405);
  } finally {
    await d.close();
  }
  assert.throws(() => playModelMount(join(tmp, "absent")), /^Error: rlvr play --model: directory .*absent does not exist/);
  rmSync(join(dir, "tokenizer.json"));
  assert.throws(() => playModelMount(dir), /rlvr play --model: .*tokenizer\.json not found; a model directory needs config\.json, model\.safetensors and tokenizer\.json/);
});
