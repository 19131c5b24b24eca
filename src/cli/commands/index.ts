/** The list of CLI command modules. Add a module here to add a command. */
import type { Command } from "commander";

type Register = (program: Command) => void;
const modules: Register[] = [];

export function registerCommands(program: Command): void {
  for (const register of modules) register(program);
}
