// The relay's resident memory: VmRSS/VmHWM of --pid from /proc, or this process's RSS when the
// relay runs in-process (then the figure includes the load generator and the dataset too). Also
// the CPU time used so far by the relay (/proc/PID/stat) and by this load tool, since both share
// the machine's cores, and, when the relay has a memory cgroup with a limit, that cgroup's charge.
// Read at phase marks; the once-a-second series (series.ts) reads only /proc/PID/status.
import { readdirSync, readFileSync } from "node:fs";
import type { Cgroup } from "./cgroup.ts";
import { readCgroup } from "./cgroup.ts";

export interface MemReading {
  rssMB: number;
  /** kernel's peak RSS (VmHWM) when read from /proc; else the peak this sampler saw */
  peakMB: number;
  /** /proc only: anonymous memory (JS heap, buffers) vs file pages (LMDB's memory map) */
  anonMB?: number;
  fileMB?: number;
  /** /proc only: proportional set size; lmdb-js keeps several overlapping maps of data.mdb as
   * it grows, and RSS counts a page once per map, so PSS is the truer figure for the relay */
  pssMB?: number;
  /** CPU seconds (user + system) used so far by the relay (/proc only) and by this process */
  relayCpuS?: number;
  toolCpuS?: number;
  /** /proc only: CPU seconds so far of the relay's live threads, summed by thread name */
  threads?: Record<string, number>;
  /** the relay's memory cgroup, when it has a limit: usage (anon + page cache), kernel's peak */
  cgroupMB?: number;
  cgroupPeakMB?: number;
  cgroupAnonMB?: number;
  cgroupFileMB?: number;
}

/** /proc/PID/status in MiB: a read of counters, cheap at any size, unlike smaps_rollup. */
export interface ProcStatus {
  vmRssMB: number;
  vmHwmMB: number;
  rssAnonMB: number;
  rssFileMB: number;
}

export function procStatus(pid: number): ProcStatus | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const mb = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN) / 1024;
    return { vmRssMB: mb("VmRSS"), vmHwmMB: mb("VmHWM"), rssAnonMB: mb("RssAnon"), rssFileMB: mb("RssFile") };
  } catch {
    return undefined;
  }
}

const MB = 1024 * 1024;
/** USER_HZ: the unit of utime/stime in /proc/PID/stat, 100 on every Linux port */
const TICKS = 100;

function cpuOf(pid: number): number | undefined {
  try {
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / TICKS;
  } catch {
    return undefined;
  }
}

const toolCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

function fromProc(pid: number, pss: boolean): MemReading | undefined {
  const st = procStatus(pid);
  if (!st) return undefined;
  let pssMB: number | undefined;
  if (pss)
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
      pssMB = Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? Number.NaN) / 1024;
    } catch {
      // Older kernels have no smaps_rollup; RSS alone will do.
    }
  return {
    rssMB: st.vmRssMB,
    peakMB: st.vmHwmMB,
    anonMB: st.rssAnonMB,
    fileMB: st.rssFileMB,
    pssMB,
    relayCpuS: cpuOf(pid),
  };
}

/** CPU seconds of each live thread of `pid`, summed by thread name (threads that ended are gone). */
function threadsOf(pid: number): Record<string, number> | undefined {
  try {
    const out: Record<string, number> = {};
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        out[comm] = (out[comm] ?? 0) + (Number(f[11]) + Number(f[12])) / TICKS;
      } catch {
        // the thread ended between the listing and the read
      }
    }
    return out;
  } catch {
    return undefined;
  }
}

export class MemSampler {
  private peak = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  readonly marks: Record<string, MemReading> = {};

  /** `pid` undefined: this process. `cgroup`: the relay's memory cgroup, read at each mark. */
  constructor(
    readonly pid: number | undefined,
    readonly cgroup?: Cgroup,
  ) {}

  read(pss = true): MemReading | undefined {
    if (this.pid !== undefined) return fromProc(this.pid, pss);
    const rss = process.memoryUsage.rss() / MB;
    this.peak = Math.max(this.peak, rss);
    return { rssMB: rss, peakMB: this.peak };
  }

  /**
   * In-process, samples every 250 ms so the peak catches spikes between phase marks. A relay
   * in its own process is read only at the marks (the kernel keeps its peak, VmHWM): reading
   * smaps_rollup walks the relay's page tables under its memory-map lock, and doing that every
   * 250 ms showed up as stalls of every request in flight at those moments.
   */
  start(): void {
    this.read();
    if (this.pid !== undefined) return;
    this.timer = setInterval(() => this.read(), 250);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * `pss` false: no smaps_rollup read, for a mark taken while the relay is still working (after
   * the last OK, its derived indexes still catching up) and timed; at a million events the
   * page-table walk takes long enough to show.
   */
  mark(label: string, pss = true): void {
    const r = this.read(pss);
    if (!r) return;
    const m: MemReading = { rssMB: Math.round(r.rssMB), peakMB: Math.round(r.peakMB) };
    if (r.anonMB !== undefined) m.anonMB = Math.round(r.anonMB);
    if (r.fileMB !== undefined) m.fileMB = Math.round(r.fileMB);
    if (r.pssMB !== undefined) m.pssMB = Math.round(r.pssMB);
    if (r.relayCpuS !== undefined) m.relayCpuS = r.relayCpuS;
    if (this.pid !== undefined) m.threads = threadsOf(this.pid);
    const cg = this.cgroup && readCgroup(this.cgroup);
    if (cg) {
      m.cgroupMB = Math.round(cg.usageMB);
      if (cg.peakMB !== undefined) m.cgroupPeakMB = Math.round(cg.peakMB);
      if (cg.anonMB !== undefined) m.cgroupAnonMB = Math.round(cg.anonMB);
      if (cg.fileMB !== undefined) m.cgroupFileMB = Math.round(cg.fileMB);
    }
    m.toolCpuS = Math.round(toolCpu() * 100) / 100;
    this.marks[label] = m;
  }
}
