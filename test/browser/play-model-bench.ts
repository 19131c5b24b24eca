/**
 * Seconds per GRPO step of `rlvr play --model` in headless Chromium (Wasm) at the page's default
 * size (MODEL_PLAY: 2 prompts × 4 samples × 48 tokens, LoRA rank 8, bf16 base), with 2 steps and
 * 2 held-out prompts; prints the page's status lines and its timings (docs/engines.md "In a browser").
 *   node --import tsx test/browser/play-model-bench.ts [model dir or name]
 */
import { MODEL_PLAY } from "../../src/browser/session.ts";
import { PageHarness } from "./page.ts";

const model = process.argv[2] ?? "smollm2-135m-instruct";
const h = new PageHarness({ model });
try {
  const url = await h.url();
  const { page } = await h.open(["--headless", "--disable-gpu"]);
  const s = { ...MODEL_PLAY, rlSteps: 2, evalPrompts: 2 };
  const q = new URLSearchParams({ backend: "wasm", autostart: "1", ...Object.fromEntries(Object.entries(s).map(([k, v]) => [k, String(v)])) });
  const t0 = performance.now();
  await page.goto(`${url}?${q}`);
  let last = "";
  for (;;) {
    const st = await page.evaluate(() => ({ state: (window as unknown as { rlvrPlay: { state: string } }).rlvrPlay.state, status: document.querySelector("#status")!.textContent ?? "" }));
    if (st.status !== last) console.log(`${((performance.now() - t0) / 1000).toFixed(0)} s: ${(last = st.status)}`);
    if (st.state === "done" || st.state === "error") break;
    await new Promise((ok) => setTimeout(ok, 2000));
  }
  console.log(JSON.stringify(await page.evaluate(() => {
    const p = (window as unknown as { rlvrPlay: Record<string, unknown> }).rlvrPlay;
    return { device: p.device, loadSeconds: p.loadSeconds, stepSeconds: p.stepSeconds, metrics: (p.metrics as Record<string, unknown>[]).filter((m) => m.stage === "rl").map((m) => ({ reward: m["reward/mean"], loss: m["loss/policy"], time: m["time/step"] })) };
  })));
} finally {
  await h.close();
}
