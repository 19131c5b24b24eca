/**
 * Helpers of the training page's browser tests: Chromium (Debian's package, through
 * playwright-core) or a skip, the built page on a local server, and one training run in a tab.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { QUICKSTART_PLAY, type PlaySettings } from "../../src/browser/session.ts";
import { startPlay } from "../../src/cli/commands/play.ts";
import type { DashboardServer } from "../../src/dashboard/server.ts";

export const CHROMIUM = process.env.RLVR_CHROMIUM ?? "/usr/bin/chromium";

/** window.rlvrPlay after a run (dashboard/train/main.ts). */
export interface PageRun {
  state: string;
  error: string | null;
  device: string;
  evals: { label: string; meanAtN: number; greedy?: number }[];
  metrics: Record<string, number>[];
}

/** The quickstart's run with `over` changed. */
export function settings(over: Partial<PlaySettings>): PlaySettings {
  return { ...QUICKSTART_PLAY, ...over };
}

/** True when Chromium is here; else skips `t` (or fails under RLVR_REQUIRE_CHROMIUM=1). */
export function chromiumOrSkip(t: { skip: (why: string) => void }): boolean {
  if (existsSync(CHROMIUM)) return true;
  const why = `${CHROMIUM} not found; install Debian's chromium package (apt-get install -y chromium) to run the training page's browser tests`;
  if (process.env.RLVR_REQUIRE_CHROMIUM === "1") assert.fail(`RLVR_REQUIRE_CHROMIUM=1 but ${why}`);
  console.log(`# SKIP training page browser test: ${why}`);
  t.skip(why);
  return false;
}

/** A browser with its training-page server (`rlvr play`'s, cross-origin isolated); `close()` ends both. */
export class PageHarness {
  private server: DashboardServer | null = null;
  private browser: Browser | null = null;

  /** @param play startPlay's options (e.g. `model`: the page trains that model) */
  constructor(private readonly play: Parameters<typeof startPlay>[0] = {}) {}

  async url(): Promise<string> {
    this.server ??= await startPlay(this.play);
    return this.server.url;
  }

  /** A new tab in Chromium started with `args`; page errors and console errors are collected. */
  async open(args: string[]): Promise<{ page: Page; errors: string[] }> {
    const { chromium } = await import("playwright-core");
    this.browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", ...args],
    });
    const page = await this.browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    return { page, errors };
  }

  /** Open the page with `s` in its URL and autostart; wait until the run ends; return window.rlvrPlay. */
  async train(page: Page, backend: string, s: PlaySettings | Record<string, number>, timeout: number): Promise<PageRun> {
    const query = new URLSearchParams({ backend, autostart: "1", ...Object.fromEntries(Object.entries(s).map(([k, v]) => [k, String(v)])) });
    await page.goto(`${await this.url()}?${query}`);
    await page.waitForFunction(() => ["done", "error"].includes((window as unknown as { rlvrPlay?: { state: string } }).rlvrPlay?.state ?? ""), null, { timeout, polling: 250 });
    return page.evaluate(() => {
      const p = (window as unknown as { rlvrPlay: PageRun }).rlvrPlay;
      return { state: p.state, error: p.error, device: p.device, evals: p.evals.map((e) => ({ label: e.label, meanAtN: e.meanAtN, greedy: e.greedy })), metrics: p.metrics };
    });
  }

  async close(): Promise<void> {
    await this.browser?.close().catch(() => {});
    await this.server?.close();
  }
}

/** SFT losses of a run's metrics records, in step order. */
export function sftLosses(metrics: readonly Record<string, unknown>[]): number[] {
  return metrics.filter((m) => m["stage"] === "sft" && typeof m["loss"] === "number").map((m) => m["loss"] as number);
}
