/**
 * `npm run bench -- serve`: rlvr serve under 200 concurrent chat requests (at most 32 in flight,
 * openai SDK, 127.0.0.1) on a tiny random model: p50/p95 latency, requests/s, engine calls; and
 * the same load with batching off (one request per engine call) as the baseline of the same run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { serve } from "../src/serve/server.ts";
import { makeTinyRun } from "../test/serve/helpers.ts";

const N = Number(process.env.SERVE_BENCH_REQUESTS ?? 200);
const CONCURRENCY = Number(process.env.SERVE_BENCH_CONCURRENCY ?? 32);

async function load(run: string, batched: boolean): Promise<{ p50: number; p95: number; rps: number; calls: number }> {
  const server = await serve({ checkpoint: run, port: 0, ...(batched ? {} : { maxBatchRows: 1 }) });
  const client = new OpenAI({ baseURL: server.url, apiKey: "unused", maxRetries: 0 });
  try {
    const lat: number[] = [];
    let next = 0;
    const t0 = performance.now();
    const worker = async () => {
      while (next < N) {
        const i = next++;
        const t = performance.now();
        await client.chat.completions.create({ model: server.ctx.modelName, messages: [{ role: "user", content: `what is ${i % 10}+${i % 7}?` }], max_tokens: 16, temperature: 1 });
        lat.push(performance.now() - t);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const wall = (performance.now() - t0) / 1000;
    lat.sort((a, b) => a - b);
    const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!;
    return { p50: q(0.5), p95: q(0.95), rps: N / wall, calls: server.ctx.batcher.stats.calls };
  } finally {
    await server.close();
  }
}

const root = mkdtempSync(join(tmpdir(), "rlvr-bench-serve-"));
try {
  const run = await makeTinyRun(root, { hiddenSize: 32, maxPositionEmbeddings: 64 });
  const batched = await load(run, true);
  const single = await load(run, false);
  const row = (name: string, r: typeof batched) => `| ${name} | ${N} | ${CONCURRENCY} | ${r.calls} | ${r.p50.toFixed(0)} | ${r.p95.toFixed(0)} | ${r.rps.toFixed(1)} |`;
  process.stdout.write(
    [
      "| server | requests | in flight | engine calls | p50 ms | p95 ms | requests/s |",
      "|---|---|---|---|---|---|---|",
      row("batched (5 ms window, ≤ 64 rows/call)", batched),
      row("one request per engine call", single),
      "",
      `throughput ratio batched / unbatched: ${(batched.rps / single.rps).toFixed(2)}×`,
      "",
    ].join("\n"),
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
