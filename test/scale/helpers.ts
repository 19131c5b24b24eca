/** Helpers of the scale tests. */
import { spawnSync } from "node:child_process";

/** Processes ("pid pgid args") in process group `pgid`, from ps. */
export function groupMembers(pgid: number): string[] {
  const ps = spawnSync("ps", ["-eo", "pid=,pgid=,args="], { encoding: "utf8" });
  return ps.stdout.split("\n").filter((l) => l.trim().split(/\s+/)[1] === String(pgid));
}
