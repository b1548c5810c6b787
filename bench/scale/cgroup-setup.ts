// A memory cgroup of its own for the relay under test, so a limit like 1 GiB applies to it alone
// and its charge (anonymous memory plus the page cache of its LMDB files) can be read apart.
//
// cgroup v1 (a `memory` hierarchy at /sys/fs/cgroup/memory): the group is made inside the
// memory cgroup this driver runs in, so on a plain machine /sys/fs/cgroup/memory/relay-bench-P,
// and inside a container or a session's group, a child of that group: the relay stays within
// whatever bounds and accounts for the driver. memory.limit_in_bytes gets the limit, and
// memory.memsw.limit_in_bytes the same where it exists (swap accounting on), so swap is no way
// around it. cgroup v2 (memory in /sys/fs/cgroup/cgroup.controllers, no v1 memory hierarchy):
// /sys/fs/cgroup/relay-bench-P with memory.max, and memory.swap.max 0. v2 makes it at the root
// because a group that holds processes (the driver's own) cannot give its children controllers.
//
// The relay is started through `sh -c 'echo $$ > DIR/cgroup.procs; exec …'`, so it is in the
// group before its first allocation rather than moved in after it started.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Cgroup } from "../load/cgroup.ts";
import { cgroupOf, limitOf } from "../load/cgroup.ts";

const ROOT = "/sys/fs/cgroup";

function hierarchy(): 1 | 2 {
  if (existsSync(join(ROOT, "memory", "memory.limit_in_bytes"))) return 1;
  const controllers = existsSync(join(ROOT, "cgroup.controllers"))
    ? readFileSync(join(ROOT, "cgroup.controllers"), "utf8")
    : "";
  if (controllers.split(/\s+/).includes("memory")) return 2;
  throw new Error("no cgroup memory controller: neither /sys/fs/cgroup/memory (v1) nor memory in v2");
}

/** Makes (or reuses, emptied of any limit) the group and sets its limit. Needs root. */
export function makeCgroup(port: number, limitBytes: number): Cgroup {
  const version = hierarchy();
  const name = `relay-bench-${port}`;
  const parent = version === 1 ? (cgroupOf("self")?.dir ?? join(ROOT, "memory")) : ROOT;
  const dir = join(parent, name);
  if (existsSync(dir)) {
    const busy = readFileSync(join(dir, "cgroup.procs"), "utf8").trim();
    if (busy)
      throw new Error(
        `${dir} still holds processes ${busy.replace(/\n/g, " ")}: another run on port ${port}?`,
      );
    rmdirSync(dir);
  }
  mkdirSync(dir);
  const write = (file: string, v: string | number) => writeFileSync(join(dir, file), String(v));
  if (version === 1) {
    // The plain limit first: memsw may never be set below it.
    write("memory.limit_in_bytes", limitBytes);
    if (existsSync(join(dir, "memory.memsw.limit_in_bytes")))
      write("memory.memsw.limit_in_bytes", limitBytes);
  } else {
    write("memory.max", limitBytes);
    if (existsSync(join(dir, "memory.swap.max"))) write("memory.swap.max", 0);
  }
  return { version, dir, limitBytes: limitOf(version, dir) };
}

/** `cmd` wrapped so that the process enters `dir` before it becomes `cmd`. */
export const inCgroup = (dir: string, cmd: string[]): string[] => [
  "sh",
  "-c",
  'echo $$ > "$0/cgroup.procs" && exec "$@"',
  dir,
  ...cmd,
];

/** Removes the group once its processes are gone; the kernel may need a moment after an exit. */
export async function removeCgroup(c: Cgroup): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    try {
      rmdirSync(c.dir);
      return true;
    } catch {
      await Bun.sleep(100);
    }
  }
  return false;
}
