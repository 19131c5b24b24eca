// `rlvr tinker` from the command line: it prints its URL once listening and answers healthz and
// capabilities; a malformed --model is one line naming the flag.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeTinyModel } from "../tinker/fixture.ts";

const bin = new URL("../../bin/rlvr.js", import.meta.url).pathname;
const env = { ...process.env, RLVR_FROM_SOURCE: "1", RLVR_ENGINE_PROBE: "off" };

describe("rlvr tinker (CLI)", () => {
  it("serves: prints the URL, answers healthz and lists the --model name", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rlvr-tinker-cli-"));
    await writeTinyModel(join(dir, "tiny"));
    const p = spawn(process.execPath, [bin, "tinker", "--port", "0", "--model", `tiny=${join(dir, "tiny")}`, "--data-dir", join(dir, "data")], { env });
    try {
      const url = await new Promise<string>((res, rej) => {
        let out = "";
        p.stdout.on("data", (d) => {
          out += d;
          const m = /rlvr tinker: (http:\/\/\S+)/.exec(out);
          if (m) res(m[1]!);
        });
        p.on("exit", (code) => rej(new Error(`rlvr tinker exited with ${code}`)));
      });
      assert.deepEqual(await (await fetch(`${url}/api/v1/healthz`)).json(), { status: "ok" });
      const caps = (await (await fetch(`${url}/api/v1/get_server_capabilities`)).json()) as { supported_models: { model_name: string }[] };
      assert.deepEqual(caps.supported_models.map((m) => m.model_name), ["tiny"]);
    } finally {
      p.kill("SIGTERM");
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a malformed --model is one line naming the flag", () => {
    const r = spawnSync(process.execPath, [bin, "tinker", "--model", "tiny"], { env, encoding: "utf8" });
    assert.equal(r.status, 1);
    assert.equal(r.stderr.trim(), 'error: rlvr tinker: --model expects name=directory, got "tiny"');
  });
});
