#!/usr/bin/env node
// Entry point of the `rlvr` CLI: registers the TypeScript loader (tsx) and runs src/cli/main.ts.
import { register } from "tsx/esm/api";
register();
await import("../src/cli/main.ts");
