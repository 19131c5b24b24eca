/** Console progress for long stages (cli-progress bars on a TTY, periodic lines otherwise). */
import cliProgress from "cli-progress";
import type { RunHooks } from "../trainer/session.ts";

/** Hooks that draw one progress bar per stage on stderr. */
export function progressHooks(): RunHooks & { stop(): void } {
  const tty = process.stderr.isTTY;
  let bar: cliProgress.SingleBar | null = null;
  let current = "";
  let lastLine = 0;
  const stop = () => {
    bar?.stop();
    bar = null;
  };
  return {
    quiet: true,
    stage(name, detail) {
      stop();
      current = name;
      process.stderr.write(`» ${name}${detail ? ` (${detail})` : ""}\n`);
    },
    progress(stage, step, total, info) {
      const text = Object.entries(info)
        .map(([k, v]) => `${k} ${v.toFixed(3)}`)
        .join("  ");
      if (tty) {
        if (!bar || stage !== current) {
          stop();
          current = stage;
          bar = new cliProgress.SingleBar(
            { format: `  ${stage} [{bar}] {value}/{total}  {info}  eta {eta_formatted}`, hideCursor: true, stream: process.stderr, clearOnComplete: false },
            cliProgress.Presets.shades_classic,
          );
          bar.start(total, 0, { info: "" });
        }
        bar.update(step, { info: text });
        if (step === total) stop();
      } else if (step === total || Date.now() - lastLine > 10_000) {
        lastLine = Date.now();
        process.stderr.write(`  ${stage} ${step}/${total}  ${text}\n`);
      }
    },
    stop,
  };
}
