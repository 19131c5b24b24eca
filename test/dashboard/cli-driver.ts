// Runs the `dashboard` command module on its own (without src/cli/commands/index.ts), for tests.
import { Command } from "commander";
import { register } from "../../src/cli/commands/dashboard.ts";

const program = new Command();
program.name("rlvr").exitOverride();
register(program);
try {
  await program.parseAsync(process.argv);
} catch (e) {
  const err = e as { code?: string; message?: string; exitCode?: number };
  if (!err.code?.startsWith("commander.")) process.stderr.write(`error: ${err.message}\n`);
  process.exit(err.exitCode ?? 1);
}
