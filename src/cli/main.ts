/**
 * The `rlvr` command line. Each command lives in its own module under ./commands and exports
 * `register(program)`; this file only wires them together.
 */
import { Command } from "commander";
import { registerCommands } from "./commands/index.ts";

const program = new Command();
program
  .name("rlvr")
  .description("Reinforcement learning from verifiable rewards for language models")
  .showHelpAfterError();
registerCommands(program);
await program.parseAsync(process.argv);
