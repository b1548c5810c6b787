// The memory cgroup a process runs in, and what the kernel charges it: usage (anonymous memory
// plus page cache, which is what a cgroup limit counts and reclaims against), its peak, the
// anon/file split, and the OOM kills. cgroup v1 (memory.usage_in_bytes, memory.stat rss/cache,
// memory.oom_control) and v2 (memory.current, memory.stat anon/file, memory.events). Every read
// is a small file the kernel fills from counters: cheap enough to do every second during a run.
import { existsSync, readFileSync } from "node:fs";

export interface Cgroup {
  version: 1 | 2;
  dir: string;
  /** undefined when the cgroup has no memory limit */
  limitBytes: number | undefined;
}

export interface CgroupReading {
  usageMB: number;
  /** the kernel's peak usage (v1 max_usage_in_bytes; v2 memory.peak, kernel 5.19+) */
  peakMB?: number;
  anonMB?: number;
  fileMB?: number;
}

export interface CgroupOom {
  /** processes the OOM killer killed in this cgroup */
  oomKills: number | undefined;
  /** v1: times usage hit the limit (the kernel then reclaims; not each one is an OOM) */
  failcnt?: number;
}

const ROOT = "/sys/fs/cgroup";
const MB = 2 ** 20;
/** v1 writes "no limit" as the largest page-aligned value; anything this large is no limit */
const UNLIMITED = 2 ** 60;

const read = (file: string): string | undefined => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
};

const num = (file: string): number | undefined => {
  const s = read(file)?.trim();
  return s === undefined || s === "max" || s === "" ? undefined : Number(s);
};

/** `key value` lines (memory.stat, memory.events, memory.oom_control). */
function keyed(file: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of (read(file) ?? "").split("\n")) {
    const [k, v] = line.split(" ");
    if (k && v !== undefined) out.set(k, Number(v));
  }
  return out;
}

export function limitOf(version: 1 | 2, dir: string): number | undefined {
  const limit = num(`${dir}/${version === 1 ? "memory.limit_in_bytes" : "memory.max"}`);
  return limit === undefined || limit >= UNLIMITED ? undefined : limit;
}

/** The memory cgroup of `pid` (v1's memory hierarchy first, where both are mounted). */
export function cgroupOf(pid: number | "self"): Cgroup | undefined {
  const lines = (read(`/proc/${pid}/cgroup`) ?? "").split("\n");
  const v1 = lines
    .map((l) => /^\d+:([^:]*):(.*)$/.exec(l))
    .find((m) => m?.[1]?.split(",").includes("memory"));
  if (v1 && existsSync(`${ROOT}/memory`)) {
    const dir = `${ROOT}/memory${v1[2] === "/" ? "" : v1[2]}`;
    if (existsSync(`${dir}/memory.usage_in_bytes`)) return { version: 1, dir, limitBytes: limitOf(1, dir) };
  }
  const v2 = lines.map((l) => /^0::(.*)$/.exec(l)).find((m) => m);
  if (v2 && existsSync(`${ROOT}/cgroup.controllers`)) {
    const dir = `${ROOT}${v2[1] === "/" ? "" : v2[1]}`;
    if (existsSync(`${dir}/memory.current`)) return { version: 2, dir, limitBytes: limitOf(2, dir) };
  }
  return undefined;
}

export function readCgroup(c: Cgroup): CgroupReading | undefined {
  const usage = num(`${c.dir}/${c.version === 1 ? "memory.usage_in_bytes" : "memory.current"}`);
  if (usage === undefined) return undefined;
  const peak = num(`${c.dir}/${c.version === 1 ? "memory.max_usage_in_bytes" : "memory.peak"}`);
  const stat = keyed(`${c.dir}/memory.stat`);
  // v1: total_* include child cgroups, like usage_in_bytes does.
  const anon = c.version === 1 ? (stat.get("total_rss") ?? stat.get("rss")) : stat.get("anon");
  const file = c.version === 1 ? (stat.get("total_cache") ?? stat.get("cache")) : stat.get("file");
  const r: CgroupReading = { usageMB: usage / MB };
  if (peak !== undefined) r.peakMB = peak / MB;
  if (anon !== undefined) r.anonMB = anon / MB;
  if (file !== undefined) r.fileMB = file / MB;
  return r;
}

export function oomOf(c: Cgroup): CgroupOom {
  if (c.version === 1) {
    // oom_kill is in memory.oom_control since Linux 4.13.
    return {
      oomKills: keyed(`${c.dir}/memory.oom_control`).get("oom_kill"),
      failcnt: num(`${c.dir}/memory.failcnt`),
    };
  }
  return { oomKills: keyed(`${c.dir}/memory.events`).get("oom_kill") };
}
