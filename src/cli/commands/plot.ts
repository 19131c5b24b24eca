/**
 * `rlvr plot <run-dir>… --metric M [--stage rl] [--out file.png|.svg]` draws a metric of
 * metrics.jsonl over steps for several runs in one figure; `--passk` draws the pass@k curve of each
 * run's evaluation (eval.jsonl; `--eval-label sft` for the base before RL). See src/eval/plot.ts.
 */
import type { Command } from "commander";
import { plotRuns } from "../../eval/plot.ts";

interface PlotCommandOptions {
  metric?: string;
  stage: string;
  passk?: boolean;
  evalLabel?: string;
  out?: string;
  title?: string;
  width: string;
  height: string;
  scale: string;
}

/** A positive number option, or one error line naming the option. */
function positive(name: string, v: string): number {
  const x = Number(v);
  if (!Number.isFinite(x) || x <= 0) throw new Error(`--${name}: expected a number > 0, got "${v}"`);
  return x;
}

export function register(program: Command): void {
  program
    .command("plot")
    .description("draw a metric over steps for several runs, or their pass@k curves, as PNG or SVG")
    .argument("<run-dirs...>", "run directories (written by rlvr train)")
    .option("--metric <name>", "a metrics.jsonl key, e.g. accuracy, reward/mean, response/length_mean, entropy")
    .option("--stage <stage>", "the stage whose steps are drawn", "rl")
    .option("--passk", "draw pass@k over k from eval.jsonl instead of a metric")
    .option("--eval-label <label>", "with --passk: the evaluation to draw (default: each run's last)")
    .option("--out <file>", "output file, .png or .svg (default: <metric>.png, or passk.png)")
    .option("--title <text>", "figure title")
    .option("--width <px>", "figure width in CSS pixels", "640")
    .option("--height <px>", "figure height in CSS pixels", "400")
    .option("--scale <x>", "PNG pixels per CSS pixel", "2")
    .action(async (dirs: string[], o: PlotCommandOptions) => {
      const out = o.out ?? (o.passk ? "passk.png" : `${(o.metric ?? "metric").replace(/[^A-Za-z0-9_.-]+/g, "_")}.png`);
      const r = await plotRuns(dirs, {
        metric: o.metric,
        stage: o.stage,
        passk: o.passk,
        evalLabel: o.evalLabel,
        out,
        title: o.title,
        width: positive("width", o.width),
        height: positive("height", o.height),
        scale: positive("scale", o.scale),
      });
      const points = r.series.reduce((a, s) => a + s.points.length, 0);
      process.stdout.write(`wrote ${r.out} (${r.format.toUpperCase()}, ${r.width}×${r.height}, ${r.series.length} series, ${points} points)\n`);
    });
}
