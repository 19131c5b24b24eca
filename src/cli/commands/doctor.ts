/**
 * `rlvr doctor`: which isolation layers the code sandbox has on this machine.
 *
 * Prints one line per layer (present `+`, missing `-`), the probe's notes, and a smoke run of one
 * Python and one JavaScript program through the sandbox. Exit code 0; with `--require-bwrap`,
 * 1 when bubblewrap is not in use (for CI). `--json` prints the same as one JSON object.
 */
import type { Command } from "commander";
import { describeLayers, sandboxSupport } from "../../rewards/code/probe.ts";
import { makeWorkdir, runSandboxed, type Language } from "../../rewards/code/sandbox.ts";

/** Run a one-line program in the sandbox; returns "ok (N ms)" or what went wrong. */
async function smoke(language: Language): Promise<string> {
  const file = language === "python" ? "p.py" : "p.js";
  const wd = makeWorkdir({ [file]: language === "python" ? "print(6 * 7)" : "console.log(6 * 7)" });
  try {
    const r = await runSandboxed({ language, workdir: wd.path, args: [file], limits: { timeoutMs: 20_000 } });
    if (r.stdout.trim() === "42") return `ok (${Math.round(r.durationMs)} ms)`;
    return `failed: ${r.timedOut ? "timeout" : `exit ${r.exitCode ?? r.signal}`} ${r.stderr.trim().split("\n").pop() ?? ""}`.trim();
  } catch (e) {
    return `failed: ${(e as Error).message}`;
  } finally {
    wd.dispose();
  }
}

export function register(program: Command): void {
  program
    .command("doctor")
    .description("show which isolation layers the code sandbox has on this machine")
    .option("--json", "print one JSON object")
    .option("--require-bwrap", "exit 1 when bubblewrap is not in use")
    .action(async (o: { json?: boolean; requireBwrap?: boolean }) => {
      const support = sandboxSupport();
      const layers = describeLayers(support);
      const level = support.bwrap ? "full (bubblewrap)" : "WEAKER fallback (no bubblewrap): programs can read host files and write /tmp; see docs/rewards.md";
      const runs: Record<string, string> = {};
      for (const lang of ["python", "javascript"] as const) runs[lang] = lang === "python" && !support.python ? "skipped: no python3" : await smoke(lang);
      if (o.json) {
        process.stdout.write(JSON.stringify({ isolation: support.bwrap ? "bubblewrap" : "fallback", layers, notes: support.notes, smoke: runs }) + "\n");
      } else {
        const lines = [`code sandbox isolation: ${level}`];
        for (const l of layers) lines.push(`  ${l.present ? "+" : "-"} ${l.layer.padEnd(22)} ${l.detail}`);
        for (const n of support.notes) lines.push(`  note: ${n}`);
        for (const [lang, r] of Object.entries(runs)) lines.push(`  smoke run ${lang.padEnd(10)} ${r}`);
        process.stdout.write(lines.join("\n") + "\n");
      }
      if (o.requireBwrap && !support.bwrap) process.exitCode = 1;
    });
}
