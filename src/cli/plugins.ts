/**
 * The `--plugin <module>` option every command that resolves a name carries (train, eval,
 * data gen, verify, verify-audit, serve): the same modules a config's `plugins:` names, imported
 * before the command looks anything up (src/config/plugins.ts, loadCommandPlugins).
 */
import type { Command } from "commander";

export { loadCommandPlugins } from "../config/plugins.ts";

/** Add the repeatable `--plugin <module>` option to `cmd` (parsed as `plugin: string[]`). */
export function withPluginOption(cmd: Command): Command {
  return cmd.option(
    "--plugin <module>",
    "a module that registers tasks, verifiers/rewards, losses… (path relative to the working directory, or a package; repeatable; the same as plugins: in a config)",
    (v: string, acc: string[]) => [...acc, v],
    [] as string[],
  );
}
