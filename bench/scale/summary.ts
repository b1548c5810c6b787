// One scale run as a markdown table row (runs against the same header paste into one table, so
// alternating base/new runs read side by side), and the figures behind it.
import type { E2EResult } from "../load/e2e.ts";
import { fmtRate, round } from "../load/stats.ts";
import type { DiskUse } from "./disk.ts";
import type { RelayExit } from "./relay-process.ts";

export interface Outcome {
  /** "ok", or how the run ended otherwise */
  text: string;
  oomKilled: boolean;
}

export interface ScaleFigures {
  relayCpuUsPerEvent?: number;
  /** µs of relay CPU per accepted event, by thread name, first EVENT → caught up */
  threadCpuUsPerEvent?: Record<string, number>;
  /** blocks allocated (`du -sB1`) per accepted event */
  bytesPerEvent?: number;
  derivedBytesPerEvent?: number;
  /** the files' lengths (`du -sb`) per accepted event */
  apparentBytesPerEvent?: number;
}

export const ROW_HEADER = [
  "run",
  "accepted",
  "events/s to last OK",
  "sustained events/s",
  "lag at last OK",
  "relay µs/event",
  "peak RssAnon MB",
  "peak VmRSS MB",
  "RssAnon at last OK",
  "RssAnon at rest",
  "cgroup peak sampled (kernel) / limit MB",
  "disk MB, du (derived)",
  "disk bytes/event",
  "outcome",
];

export function figures(e: E2EResult, disk: DiskUse): ScaleFigures {
  const accepted = e.ingest?.accepted ?? 0;
  const a = e.memory.marks.start;
  const b = e.memory.marks["after catch-up"] ?? e.memory.marks["after ingest"];
  const out: ScaleFigures = {};
  if (accepted === 0) return out;
  if (a?.relayCpuS !== undefined && b?.relayCpuS !== undefined)
    out.relayCpuUsPerEvent = Math.round(((b.relayCpuS - a.relayCpuS) / accepted) * 1e6);
  if (a?.threads && b?.threads) {
    const per: Record<string, number> = {};
    for (const [k, s] of Object.entries(b.threads)) {
      const us = Math.round(((s - (a.threads[k] ?? 0)) / accepted) * 1e6);
      if (us > 0) per[k] = us;
    }
    out.threadCpuUsPerEvent = per;
  }
  // What the disk holds is the blocks allocated (`du`, as strfry's figure was taken): the derived
  // environment's file is sparse when written through a writable map, and its length (what
  // `du -b` adds up) is the map's, not the data's. The apparent figures stay in the JSON.
  const held = disk.dataAllocatedBytes ?? disk.dataBytes;
  const derivedHeld = disk.derivedAllocatedBytes ?? disk.derivedBytes;
  if (held !== undefined) out.bytesPerEvent = Math.round(held / accepted);
  if (derivedHeld !== undefined) out.derivedBytesPerEvent = Math.round(derivedHeld / accepted);
  if (disk.dataBytes !== undefined) out.apparentBytesPerEvent = Math.round(disk.dataBytes / accepted);
  return out;
}

export function outcome(e: E2EResult | undefined, exit: RelayExit, oomKills: number | undefined): Outcome {
  const at = e?.ingest ? ` at ${e.ingest.answered} events` : "";
  const oomKilled = (oomKills ?? 0) > 0 && exit.beforeStop;
  if (oomKilled) return { text: `OOM-killed${at}`, oomKilled };
  if (exit.beforeStop) return { text: `relay died (${exit.signal ?? `exit ${exit.code}`})${at}`, oomKilled };
  if (e?.ingest?.stalled) return { text: `stalled${at} (no OK for ${e.ingest.stallSeconds} s)`, oomKilled };
  if (e?.ingest?.timedOut) return { text: `timed out${at}`, oomKilled };
  if (e?.settled?.stalled) return { text: `catch-up stalled, lag ${e.settled.lagAtEnd}`, oomKilled };
  if (e?.settled?.timedOut) return { text: `catch-up timed out, lag ${e.settled.lagAtEnd}`, oomKilled };
  if (exit.killed) return { text: "ok, but needed SIGKILL to stop", oomKilled };
  return { text: "ok", oomKilled };
}

const mb = (b: number | undefined) => (b === undefined ? "" : Math.round(b / 2 ** 20));

/** `cgroupPeakMB`: the kernel's peak read after the relay exited, the whole run's. */
export function row(
  label: string,
  e: E2EResult | undefined,
  disk: DiskUse,
  f: ScaleFigures,
  o: Outcome,
  cgroupPeakMB?: number,
): string[] {
  const i = e?.ingest;
  const m = e?.ingestMemory;
  const s = e?.sustained;
  const kernel = cgroupPeakMB ?? m?.cgroupKernelPeakMB;
  const cg =
    m?.cgroupLimitMB === undefined
      ? "—"
      : `${m.peak.cgroupMB ?? "?"} (kernel ${kernel === undefined ? "?" : Math.round(kernel)}) / ${m.cgroupLimitMB}`;
  const cells = [
    label,
    i ? `${i.accepted} of ${i.events}` : "",
    i ? fmtRate(i.acceptedPerSec) : "",
    s ? fmtRate(s.acceptedPerSec) : "",
    s?.lagAtLastOk ?? e?.settled?.lagAtStart ?? "",
    f.relayCpuUsPerEvent ?? "",
    m?.peak.rssAnonMB ?? "",
    m?.peak.vmRssMB ?? "",
    m?.atLastOk.rssAnonMB ?? "",
    m?.atRest ? `${m.atRest.rssAnonMB ?? ""} (${m.atRest.seconds} s)` : "",
    cg,
    `${mb(disk.dataAllocatedBytes ?? disk.dataBytes)} (${mb(disk.derivedAllocatedBytes ?? disk.derivedBytes)})`,
    f.bytesPerEvent ?? "",
    o.text,
  ];
  return cells.map((c) => String(c));
}

export const markdownRows = (rows: string[][]): string =>
  [ROW_HEADER, ROW_HEADER.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");

export const roundBytes = (n: number | undefined): string =>
  n === undefined ? "?" : `${round(n / 2 ** 20, 1)} MB`;
