// Worker-thread entry of the verifier pool (plain JS so that Node can start it without a loader):
// registers the tsx loader in this thread, then loads the TypeScript worker body.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.entry);
