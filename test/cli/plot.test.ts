import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeFixtureRun } from "../dashboard/fixtures.ts";
import { decodePng, type Image } from "../dashboard/png.ts";
import { plotRuns, readPassAtK } from "../../src/index.ts";

const dir = mkdtempSync(join(tmpdir(), "rlvr-plot-"));
const fast = writeFixtureRun(join(dir, "fast"), { seed: 1, rate: 0.3, rlSteps: 20 });
const slow = writeFixtureRun(join(dir, "slow"), { seed: 2, rate: 0.05, rlSteps: 20 });
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** `rlvr plot …` through the user-facing entry point (sources, not dist/). */
function rlvrPlot(args: string[]) {
  const r = spawnSync(process.execPath, [join(import.meta.dirname, "../../bin/rlvr.js"), "plot", ...args], {
    encoding: "utf8",
    env: { ...process.env, RLVR_FROM_SOURCE: "1" },
    timeout: 180_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.split("\n").filter((l) => l.trim() !== "" && !/npm warn/.test(l)) };
}

/** Pixels whose colour is near `rgb` (each channel within 40). */
function countNear(img: Image, rgb: [number, number, number]): number {
  let n = 0;
  for (let i = 0; i < img.data.length; i += 4) {
    if (Math.abs(img.data[i]! - rgb[0]) < 40 && Math.abs(img.data[i + 1]! - rgb[1]) < 40 && Math.abs(img.data[i + 2]! - rgb[2]) < 40) n++;
  }
  return n;
}

/** Share of pixels that are not white (ink). */
function inkShare(img: Image): number {
  let ink = 0;
  for (let i = 0; i < img.data.length; i += 4) if (img.data[i]! < 235 || img.data[i + 1]! < 235 || img.data[i + 2]! < 235) ink++;
  return ink / (img.width * img.height);
}

// Vega's default category colours: the first series is blue (#4c78a8), the second orange (#f58518).
const BLUE: [number, number, number] = [0x4c, 0x78, 0xa8];
const ORANGE: [number, number, number] = [0xf5, 0x85, 0x18];

test("rlvr plot --metric: two runs in one PNG of the requested size, both lines drawn", () => {
  const out = join(dir, "accuracy.png");
  const r = rlvrPlot([fast, slow, "--metric", "accuracy", "--out", out, "--width", "500", "--height", "300", "--scale", "2"]);
  assert.equal(r.code, 0, r.stderr.join("\n"));
  assert.match(r.stdout, /wrote .*accuracy\.png \(PNG, 1000×600, 2 series, 40 points\)/);
  const img = decodePng(readFileSync(out));
  assert.equal(img.width, 1000);
  assert.equal(img.height, 600);
  const ink = inkShare(img);
  assert.ok(ink > 0.01 && ink < 0.5, `ink share ${ink}: blank or solid`);
  assert.ok(countNear(img, BLUE) > 500, "first run's line is drawn");
  assert.ok(countNear(img, ORANGE) > 500, "second run's line is drawn");
});

test("rlvr plot --passk: the pass@k curve as PNG and as SVG", () => {
  const png = join(dir, "passk.png");
  const r = rlvrPlot([fast, slow, "--passk", "--out", png]);
  assert.equal(r.code, 0, r.stderr.join("\n"));
  const img = decodePng(readFileSync(png));
  assert.equal(img.width, 1280);
  assert.equal(img.height, 800);
  assert.ok(inkShare(img) > 0.01, "not blank");
  assert.ok(countNear(img, BLUE) > 300 && countNear(img, ORANGE) > 300, "both curves drawn");

  const svgFile = join(dir, "passk.svg");
  assert.equal(rlvrPlot([fast, slow, "--passk", "--eval-label", "sft", "--out", svgFile]).code, 0);
  const svg = readFileSync(svgFile, "utf8");
  assert.match(svg, /^<svg[^>]* width="640" height="400"/);
  assert.match(svg, /<path[^>]*stroke="#4c78a8"/, "a line in the first colour");
  assert.match(svg, /<path[^>]*stroke="#f58518"/, "a line in the second colour");
  assert.match(svg, /pass@k/);
  assert.match(svg, /fast \(sft, step 0\)/, "legend names the run and the evaluation drawn");
});

test("pass@k points come from eval.jsonl, sorted by k", () => {
  const r = readPassAtK(fast);
  assert.equal(r.label, "rl");
  assert.equal(r.step, 20);
  assert.deepEqual(r.points.map((p) => p.x), [1, 2, 4, 8]);
  const acc = 1 - Math.exp(-0.3 * 20);
  assert.ok(Math.abs(r.points[0]!.y - acc * 0.9) < 1e-9);
});

test("a bad metric name is one clear error line listing the metrics present", () => {
  const r = rlvrPlot([fast, slow, "--metric", "acuracy", "--out", join(dir, "x.png")]);
  assert.equal(r.code, 1);
  assert.equal(r.stderr.length, 1, r.stderr.join("\n"));
  assert.match(r.stderr[0]!, /no metric "acuracy" in stage "rl"; metrics present: .*\baccuracy\b.*\bentropy\b/);
  assert.match(r.stderr[0]!, /metrics\.jsonl/);
});

test("plotRuns (API): SVG of the sft stage; bad extension and bad stage are one-line errors", async () => {
  const out = join(dir, "loss.svg");
  const r = await plotRuns([fast], { metric: "loss", stage: "sft", out, width: 400, height: 250 });
  assert.deepEqual([r.format, r.width, r.height, r.series.length, r.series[0]!.points.length], ["svg", 400, 250, 1, 5]);
  assert.match(readFileSync(out, "utf8"), /width="400" height="250"/);
  await assert.rejects(plotRuns([fast], { metric: "accuracy", out: join(dir, "x.jpg") }), /expected a file name ending in \.png or \.svg/);
  await assert.rejects(plotRuns([fast], { metric: "accuracy", stage: "ppo", out: join(dir, "x.png") }), /no records of stage "ppo" \(stages present: sft, rl\)/);
});
