// The relay through the ingest, once a second: events sent and accepted so far, its consumer lag
// (/metrics), its resident memory (/proc/PID/status: counters, cheap; never smaps_rollup, whose
// page-table walk stalls the relay, see rss.ts) and its cgroup's charge. Kept as a compact table
// for the JSON output, and summed up into peaks over a stretch of the run.
import type { Cgroup } from "./cgroup.ts";
import { readCgroup } from "./cgroup.ts";
import type { IngestProgress } from "./ingest.ts";
import { procStatus } from "./rss.ts";
import { lagOf } from "./settle.ts";

export const SERIES_COLUMNS = [
  "t",
  "sent",
  "accepted",
  "lag",
  "rssAnonMB",
  "vmRssMB",
  "cgroupMB",
  "cgroupAnonMB",
] as const;
type Column = (typeof SERIES_COLUMNS)[number];

export interface Series {
  /** `t` is seconds since the sampler started; a value is null where it could not be read */
  columns: readonly Column[];
  rows: (number | null)[][];
  /** moments of the run on the same clock as `t` (first EVENT, last OK, caught up, …) */
  marks: Record<string, number>;
}

export interface Peaks {
  rssAnonMB?: number;
  vmRssMB?: number;
  cgroupMB?: number;
}

const col = (c: Column): number => SERIES_COLUMNS.indexOf(c);
const r1 = (x: number | undefined): number | null =>
  x === undefined || Number.isNaN(x) ? null : Math.round(x * 10) / 10;

export class Sampler {
  private readonly rows: (number | null)[][] = [];
  private readonly marks: Record<string, number> = {};
  private readonly t0 = performance.now();
  private timer: ReturnType<typeof setInterval> | undefined;
  private busy = false;

  constructor(
    private readonly pid: number | undefined,
    private readonly metricsUrl: string,
    private readonly cgroup: Cgroup | undefined,
    private readonly progress: IngestProgress,
    private readonly everyMs = 1000,
  ) {}

  /** seconds since start, on the rows' clock */
  now(): number {
    return Math.round((performance.now() - this.t0) / 100) / 10;
  }

  start(): void {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.everyMs);
    this.timer.unref?.();
  }

  mark(name: string): void {
    this.marks[name] = this.now();
  }

  /** A moment given in Unix ms (as the phases report them), on the rows' clock. */
  markAt(name: string, unixMs: number): void {
    this.marks[name] = Math.round((unixMs - performance.timeOrigin - this.t0) / 100) / 10;
  }

  private async sample(): Promise<void> {
    // A slow /metrics answer (a relay under pressure) skips a tick rather than piling requests up.
    if (this.busy) return;
    this.busy = true;
    try {
      const t = this.now();
      const st = this.pid === undefined ? undefined : procStatus(this.pid);
      const cg = this.cgroup && readCgroup(this.cgroup);
      const { sent, accepted } = this.progress;
      const lag = await lagOf(this.metricsUrl, Math.max(200, this.everyMs - 100));
      const rss = st?.vmRssMB ?? (this.pid === undefined ? process.memoryUsage.rss() / 2 ** 20 : undefined);
      this.rows.push([
        t,
        sent,
        accepted,
        lag ?? null,
        r1(st?.rssAnonMB),
        r1(rss),
        r1(cg?.usageMB),
        r1(cg?.anonMB),
      ]);
    } finally {
      this.busy = false;
    }
  }

  stop(): Series {
    clearInterval(this.timer);
    return { columns: SERIES_COLUMNS, rows: this.rows, marks: this.marks };
  }
}

/** Highest values sampled with `from` ≤ t ≤ `to`. */
export function peaks(s: Series, from: number, to: number): Peaks {
  const max = (c: Column): number | undefined => {
    let m: number | undefined;
    for (const r of s.rows) {
      const v = r[col(c)];
      const t = r[0]!;
      if (t >= from && t <= to && v !== null && v !== undefined) m = Math.max(m ?? v, v);
    }
    return m;
  };
  const out: Peaks = {};
  const anon = max("rssAnonMB");
  const rss = max("vmRssMB");
  const cg = max("cgroupMB");
  if (anon !== undefined) out.rssAnonMB = anon;
  if (rss !== undefined) out.vmRssMB = rss;
  if (cg !== undefined) out.cgroupMB = cg;
  return out;
}
