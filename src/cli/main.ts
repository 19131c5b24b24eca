/**
 * The `rlvr` command line. Each command lives in its own module under ./commands and exports
 * `register(program)`; this file only wires them together and prints every error a command
 * throws as one line without a stack trace (src/util/errors.ts; `RLVR_DEBUG=1` shows the stack).
 */
import { Command } from "commander";
import { registerCommands } from "./commands/index.ts";
import "../tinker/engine.ts"; // registers model.engine: tinker with openEngine
import { formatError } from "../util/errors.ts";

/** Print `e` as one clear line (the stack with RLVR_DEBUG=1) and exit with status 1. */
function die(e: unknown): never {
  process.stderr.write(formatError(e) + "\n");
  process.exit(1);
}
process.on("uncaughtException", die);
process.on("unhandledRejection", die);

const program = new Command();
program
  .name("rlvr")
  .description("Reinforcement learning from verifiable rewards for language models")
  .showHelpAfterError();
registerCommands(program);
try {
  await program.parseAsync(process.argv);
} catch (e) {
  die(e);
}
