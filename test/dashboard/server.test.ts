import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findRuns, readJsonlFrom, startDashboardServer } from "../../src/dashboard/server.ts";
import { writeFixtureRun } from "./fixtures.ts";

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "rlvr-dash-srv-"));
}

test("readJsonlFrom: incremental reads, partial last line, bad lines, rewritten file", () => {
  const dir = tmp();
  try {
    const f = join(dir, "m.jsonl");
    assert.deepEqual(readJsonlFrom(f, 0), { records: [], offset: 0, reset: false, bad: 0, more: false });
    writeFileSync(f, '{"step":1}\n{"step":2}\n{"step":');
    const c1 = readJsonlFrom(f, 0);
    assert.deepEqual(c1.records, [{ step: 1 }, { step: 2 }]);
    assert.equal(c1.offset, 22);
    appendFileSync(f, '3}\nnot json\n{"step":4}\n');
    const c2 = readJsonlFrom(f, c1.offset);
    assert.deepEqual(c2.records, [{ step: 3 }, { step: 4 }]);
    assert.equal(c2.bad, 1);
    assert.equal(readJsonlFrom(f, c2.offset).records.length, 0);
    writeFileSync(f, '{"step":9}\n'); // a restarted run rewrote the file
    const c3 = readJsonlFrom(f, c2.offset);
    assert.equal(c3.reset, true);
    assert.deepEqual(c3.records, [{ step: 9 }]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("findRuns: run directories, folders of runs, name clashes, clear errors", () => {
  const dir = tmp();
  try {
    writeFixtureRun(join(dir, "sweep", "lr1"), { rlSteps: 2 });
    writeFixtureRun(join(dir, "sweep", "lr2"), { rlSteps: 2 });
    writeFixtureRun(join(dir, "other", "lr1"), { rlSteps: 2 });
    mkdirSync(join(dir, "empty"));
    const runs = findRuns([join(dir, "sweep"), join(dir, "other", "lr1")]);
    assert.deepEqual(runs.map((r) => [r.id, r.name]), [[0, "sweep/lr1"], [1, "lr2"], [2, "other/lr1"]]);
    assert.throws(() => findRuns([join(dir, "empty")]), /empty is not a run directory \(no metrics.jsonl, config.yaml or eval.jsonl\) and holds none/);
    assert.throws(() => findRuns([join(dir, "missing")]), /missing is not a directory/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("HTTP API: runs, JSONL from an offset, text files, static files, no escape from the page folder", async () => {
  const dir = tmp();
  const page = join(dir, "page");
  mkdirSync(join(page, "assets"), { recursive: true });
  writeFileSync(join(page, "index.html"), "<html>page</html>");
  writeFileSync(join(page, "assets", "app.js"), "console.log(1)");
  const run = writeFixtureRun(join(dir, "run"), { rlSteps: 3, sftSteps: 2 });
  const s = await startDashboardServer(findRuns([run]), page, { poll: 500 });
  try {
    assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const get = async (p: string) => {
      const r = await fetch(new URL(p, s.url));
      return { status: r.status, type: r.headers.get("content-type") ?? "", text: await r.text() };
    };
    const runs = JSON.parse((await get("api/runs")).text);
    assert.equal(runs.poll, 500);
    assert.deepEqual(runs.runs.map((r: { name: string }) => r.name), ["run"]);
    const m = JSON.parse((await get("api/runs/0/jsonl/metrics?from=0")).text);
    assert.equal(m.records.length, 5);
    assert.deepEqual(m.records.map((r: { stage: string; step: number }) => `${r.stage}${r.step}`), ["sft1", "sft2", "rl1", "rl2", "rl3"]);
    const again = JSON.parse((await get(`api/runs/0/jsonl/metrics?from=${m.offset}`)).text);
    assert.deepEqual(again.records, []);
    assert.equal(JSON.parse((await get("api/runs/0/jsonl/eval")).text).records.length, 3);
    assert.equal(JSON.parse((await get("api/runs/0/jsonl/samples")).text).records.length, 12);
    assert.match((await get("api/runs/0/text/config")).text, /groupSize: 4/);
    assert.equal((await get("api/runs/0/text/report")).type, "text/plain; charset=utf-8");
    assert.equal((await get("api/runs/7/jsonl/metrics")).status, 404);
    assert.equal((await get("api/runs/0/jsonl/secrets")).status, 404);
    assert.equal((await get("api/nothing")).status, 404);
    const js = await get("assets/app.js");
    assert.equal(js.type, "text/javascript; charset=utf-8");
    assert.equal(js.text, "console.log(1)");
    assert.equal((await get("/")).text, "<html>page</html>");
    // Paths outside the page folder get the page, never the file.
    for (const p of ["/..%2f..%2fetc%2fpasswd", "/%2e%2e/run/config.yaml", "/../run/config.yaml"]) assert.equal((await get(p)).text, "<html>page</html>", p);
    const post = await fetch(s.url, { method: "POST" });
    assert.equal(post.status, 405);
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("rlvr dashboard (command line) prints its URL and serves the built page", { timeout: 120_000 }, async () => {
  const dir = tmp();
  const run = writeFixtureRun(join(dir, "run"), { rlSteps: 2 });
  const child = spawn(process.execPath, ["--import", "tsx", "test/helpers/cli-driver.ts", "dashboard", run, "--poll", "1000"], { stdio: ["ignore", "pipe", "pipe"] });
  try {
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const url = await new Promise<string>((ok, fail) => {
      child.stdout.on("data", (d) => {
        out += d;
        const m = /rlvr dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
        if (m) ok(m[1]!);
      });
      child.on("exit", (code) => fail(new Error(`exited ${code}: ${err}`)));
    });
    assert.match(err, /run 0: run/);
    const html = await (await fetch(url)).text();
    assert.match(html, /<title>rlvr dashboard<\/title>/);
    const js = /src="\.\/(assets\/[^"]+\.js)"/.exec(html);
    assert.ok(js, html);
    assert.equal((await fetch(new URL(js[1]!, url))).status, 200);
    assert.equal(JSON.parse(await (await fetch(new URL("api/runs", url))).text()).poll, 1000);
  } finally {
    const exited = new Promise((ok) => child.once("exit", ok));
    child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
