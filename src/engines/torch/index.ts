/** The torch engine: a PyTorch + transformers worker process behind the engine contract. */
export { TorchEngine, type TorchEngineOptions, type WorkerVersions } from "./engine.ts";
export { probeTorch, resolvePython, INSTALL_HINT, DEFAULT_VENV, WORKER_ROOT } from "./worker.ts";
export { workerLaunch, type DistributedOptions } from "./launch.ts";
