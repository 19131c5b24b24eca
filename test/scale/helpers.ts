/** Helpers of the scale tests. */
import { spawnSync } from "node:child_process";

/** Live processes ("pid pgid stat args") in process group `pgid`, from ps. */
export function groupMembers(pgid: number): string[] {
  // Zombies (state Z: exited, not yet reaped by their parent) are not running; they are not counted.
  const ps = spawnSync("ps", ["-eo", "pid=,pgid=,stat=,args="], { encoding: "utf8" });
  return ps.stdout.split("\n").filter((l) => {
    const [, group, stat] = l.trim().split(/\s+/);
    return group === String(pgid) && !stat?.startsWith("Z");
  });
}
