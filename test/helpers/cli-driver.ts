// Runs the rlvr command modules in-process with commander's exitOverride, for tests:
//   node --import tsx test/helpers/cli-driver.ts data gen addition --n 3
// (bin/rlvr.js is the user-facing entry; this driver only changes how errors exit.)
import { Command } from "commander";
import { registerCommands } from "../../src/cli/commands/index.ts";

const program = new Command();
program.name("rlvr").exitOverride();
registerCommands(program);
try {
  await program.parseAsync(process.argv);
} catch (e) {
  const err = e as { code?: string; message?: string; exitCode?: number };
  if (!err.code?.startsWith("commander.")) process.stderr.write(`error: ${err.message}\n`);
  process.exit(err.exitCode ?? 1);
}
