// What the ingest amounts to beyond its OKs: the sustained rate (accepted events over the time
// from the first EVENT until the relay's derived indexes had applied them all), the consumer lag
// left at the last OK, and the relay's memory through it: peaks sampled every second, the
// readings at the last OK and after the rest, and the kernel's own peaks.
import type { Cgroup } from "./cgroup.ts";
import type { IngestResult } from "./ingest.ts";
import type { MemReading } from "./rss.ts";
import type { Series } from "./series.ts";
import { peaks } from "./series.ts";
import type { Settled } from "./settle.ts";
import { round } from "./stats.ts";

export interface Sustained {
  /** first EVENT until no consumer lag (or until the last OK when the relay reports none) */
  seconds: number;
  acceptedPerSec: number;
  /** the largest relay_consumer_lag_events right after the last OK */
  lagAtLastOk?: number;
}

export interface MemoryAt {
  rssAnonMB?: number;
  vmRssMB?: number;
  cgroupMB?: number;
}

export interface IngestMemory {
  /** sampled every second from the first EVENT until caught up (or the last OK) */
  peak: MemoryAt;
  atLastOk: MemoryAt;
  atRest?: MemoryAt & { seconds: number };
  /** the kernel's peaks over the relay's whole life, read at the end of the ingest */
  vmHwmMB?: number;
  cgroupKernelPeakMB?: number;
  cgroupLimitMB?: number;
}

export function sustainedOf(i: IngestResult, s: Settled | undefined): Sustained | undefined {
  // A rate "sustained" over an ingest that never finished would flatter a relay that died.
  if (i.accepted === 0 || i.stalled || i.timedOut || i.closedConnections === i.connections) return undefined;
  const lag = s?.lagAtStart;
  // Without a settled wait (or with a relay that keeps no lagging index) the last OK is the end.
  if (!s?.reported) {
    const seconds = (i.lastOkAt - i.firstEventAt) / 1000;
    return { seconds: round(seconds), acceptedPerSec: round(i.accepted / seconds, 1) };
  }
  if (s.timedOut || s.stalled || s.unreachable) return undefined;
  const seconds = (s.at - i.firstEventAt) / 1000;
  return {
    seconds: round(seconds),
    acceptedPerSec: round(i.accepted / seconds, 1),
    ...(lag !== undefined ? { lagAtLastOk: lag } : {}),
  };
}

const at = (m: MemReading | undefined): MemoryAt => {
  const out: MemoryAt = {};
  if (m?.anonMB !== undefined) out.rssAnonMB = m.anonMB;
  if (m) out.vmRssMB = m.rssMB;
  if (m?.cgroupMB !== undefined) out.cgroupMB = m.cgroupMB;
  return out;
};

export function ingestMemory(
  series: Series,
  marks: Record<string, MemReading>,
  restSeconds: number,
  cgroup: Cgroup | undefined,
): IngestMemory {
  const from = series.marks["first EVENT"] ?? 0;
  const to = series.marks["caught up"] ?? series.marks["last OK"] ?? Number.POSITIVE_INFINITY;
  const p = peaks(series, from, to);
  const lastOk = marks["after ingest"];
  const end = marks["after catch-up"] ?? lastOk;
  const rest = restSeconds > 0 ? marks[`after ${restSeconds} s at rest`] : undefined;
  // The readings at the marks count as samples too: the last OK may fall between two ticks.
  const peak: MemoryAt = {};
  const hi = (a: number | undefined, b: number | undefined) =>
    a === undefined ? b : b === undefined ? a : Math.max(a, b);
  const anon = hi(p.rssAnonMB, hi(lastOk?.anonMB, end?.anonMB));
  const rss = hi(p.vmRssMB, hi(lastOk?.rssMB, end?.rssMB));
  const cg = hi(p.cgroupMB, hi(lastOk?.cgroupMB, end?.cgroupMB));
  if (anon !== undefined) peak.rssAnonMB = Math.round(anon);
  if (rss !== undefined) peak.vmRssMB = Math.round(rss);
  if (cg !== undefined) peak.cgroupMB = Math.round(cg);
  const out: IngestMemory = { peak, atLastOk: at(lastOk) };
  if (rest) out.atRest = { seconds: restSeconds, ...at(rest) };
  if (end?.peakMB !== undefined && end.anonMB !== undefined) out.vmHwmMB = end.peakMB;
  if (end?.cgroupPeakMB !== undefined) out.cgroupKernelPeakMB = end.cgroupPeakMB;
  if (cgroup?.limitBytes !== undefined) out.cgroupLimitMB = Math.round(cgroup.limitBytes / 2 ** 20);
  return out;
}
