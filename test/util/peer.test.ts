/**
 * src/util/peer.ts: the one-line PeerError, and process groups that go away with their leader and
 * with this process (on exit and on SIGTERM), grandchildren included.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { PeerError, spawnGroup } from "../../src/util/peer.ts";
import { groupMembers } from "../scale/helpers.ts";

test("PeerError: one line naming the peer, the call, what happened, the step and the field", () => {
  const e = PeerError.timeout("vLLM server http://127.0.0.1:8123", "POST /v1/completions", 120, "rollout.requestTimeoutS");
  assert.equal(e.message, "vLLM server http://127.0.0.1:8123: POST /v1/completions did not answer within 120 s (rollout.requestTimeoutS)");
  const at = e.atStep("rl step 6", "resume from run/checkpoints/step-5");
  assert.equal(at.message, "vLLM server http://127.0.0.1:8123: POST /v1/completions did not answer within 120 s at rl step 6 (rollout.requestTimeoutS); resume from run/checkpoints/step-5");
  assert.ok(at instanceof PeerError && at.name === "PeerError" && !at.message.includes("\n"));
});

test("spawnGroup: when the leader dies its children go too", async () => {
  // A shell that starts a grandchild and waits: killing the shell alone would orphan the sleep.
  const child = spawnGroup("sh", ["-c", "sleep 60 & wait"], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(groupMembers(child.pid!).length >= 2);
  const exited = new Promise((r) => child.once("exit", r));
  process.kill(child.pid!, "SIGKILL");
  await exited;
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(groupMembers(child.pid!).filter((l) => !l.includes("<defunct>")), []);
});

test("spawnGroup: a process ended by SIGTERM takes its groups with it", async () => {
  const script = `import { spawnGroup } from ${JSON.stringify(join(import.meta.dirname, "../../src/util/peer.ts"))};
const c = spawnGroup("sh", ["-c", "sleep 60 & wait"], { stdio: "ignore" });
console.log(c.pid);
setInterval(() => {}, 1000);`;
  const node = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const pid = await new Promise<number>((r) => node.stdout!.once("data", (d) => r(Number(String(d).trim()))));
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(groupMembers(pid).length >= 2);
  const done = new Promise<NodeJS.Signals | null>((r) => node.once("exit", (_, sig) => r(sig)));
  node.kill("SIGTERM");
  assert.equal(await done, "SIGTERM", "it still ends as SIGTERM ends it");
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(groupMembers(pid).filter((l) => !l.includes("<defunct>")), []);
});
