/** The list of CLI command modules. Add a module here to add a command. */
import type { Command } from "commander";
import { register as quickstart } from "./quickstart.ts";
import { register as trainCmd } from "./train.ts";
import { register as evalCmd } from "./eval.ts";
import { register as data } from "./data.ts";
import { register as verify } from "./verify.ts";
import { register as dashboard } from "./dashboard.ts";
import { register as setup } from "./setup.ts";
import { register as doctor } from "./doctor.ts";
import { register as serveCmd } from "./serve.ts";
import { register as plot } from "./plot.ts";
import { register as play } from "./play.ts";
import { register as model } from "./model.ts";
import { register as tinker } from "./tinker.ts";
import { register as plan } from "./plan.ts";

type Register = (program: Command) => void;
const modules: Register[] = [quickstart, trainCmd, evalCmd, data, verify, dashboard, setup, doctor, serveCmd, plot, play, model, tinker, plan];

export function registerCommands(program: Command): void {
  for (const register of modules) register(program);
}
