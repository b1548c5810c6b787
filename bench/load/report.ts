// Human-readable tables of an end-to-end run (markdown-compatible, so they paste into
// docs/performance.md as they are), and the machine description that goes with every result.
import { cpus, totalmem } from "node:os";
import type { E2EResult } from "./e2e.ts";
import type { IngestMemory, MemoryAt } from "./ingest-summary.ts";
import type { LiveResult } from "./live.ts";
import type { QueryResult } from "./query.ts";
import type { MemReading } from "./rss.ts";
import { fmtRate, round, table } from "./stats.ts";

export function machine(): Record<string, string | number> {
  return {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGB: Math.round(totalmem() / 2 ** 30),
    os: `${process.platform} ${process.arch}`,
    bun: Bun.version,
  };
}

/** Where the ingest's CPU accounting ends: once the derived indexes caught up, when waited for. */
const ingestEnd = (r: E2EResult): MemReading | undefined =>
  r.memory.marks["after catch-up"] ?? r.memory.marks["after ingest"];

/**
 * Rows with the CPU each accepted event cost the relay (including its derived indexes catching
 * up, when the run waited for them) and the load tool.
 */
function cpuPerEvent(r: E2EResult, accepted: number): (string | number)[][] {
  const a = r.memory.marks.start;
  const b = ingestEnd(r);
  if (!a || !b || accepted === 0) return [];
  const rows: (string | number)[][] = [];
  if (r.settled?.reported)
    rows.push([
      "derived indexes caught up after the last OK (s)",
      `${round(r.settled.seconds, 2)}${r.settled.timedOut ? " (timed out)" : ""}`,
    ]);
  if (a.relayCpuS !== undefined && b.relayCpuS !== undefined)
    rows.push([
      "relay CPU per accepted event (µs)",
      Math.round(((b.relayCpuS - a.relayCpuS) / accepted) * 1e6),
    ]);
  if (a.toolCpuS !== undefined && b.toolCpuS !== undefined)
    rows.push(["load tool CPU per event (µs)", Math.round(((b.toolCpuS - a.toolCpuS) / accepted) * 1e6)]);
  return rows;
}

/** How the ingest ended, when not with every OK. */
function ending(r: E2EResult): string {
  const i = r.ingest!;
  if (i.closedConnections === i.connections) return ` (the relay closed every connection at ${i.answered})`;
  if (i.stalled) return ` (**stalled at ${i.answered} events**: no OK for ${i.stallSeconds} s)`;
  if (i.timedOut) return " (timed out)";
  return "";
}

/** Sustained rate and lag rows: the ingest until the derived indexes caught up. */
function sustainedRows(r: E2EResult): (string | number)[][] {
  const s = r.sustained;
  const st = r.settled;
  if (!s)
    return st?.reported
      ? [
          [
            "sustained events/s (first EVENT → no consumer lag)",
            st.stalled
              ? `none: the lag stopped shrinking at ${st.lagAtEnd}`
              : st.unreachable
                ? "none: the relay stopped answering"
                : `none: still ${st.lagAtEnd} behind at the time limit`,
          ],
          ["consumer lag at the last OK (events)", st.lagAtStart ?? ""],
        ]
      : [];
  return [
    [
      "**sustained events/s** (first EVENT → no consumer lag)",
      `**${fmtRate(s.acceptedPerSec)}** (${s.seconds} s)`,
    ],
    ...(s.lagAtLastOk !== undefined
      ? [["consumer lag at the last OK (events)", s.lagAtLastOk] as [string, number]]
      : []),
  ];
}

const memCells = (m: MemoryAt | undefined, cg: boolean): (string | number)[] => [
  m?.rssAnonMB ?? "",
  m?.vmRssMB ?? "",
  ...(cg ? [m?.cgroupMB ?? ""] : []),
];

/** The relay's memory through the ingest: sampled peaks, at the last OK, at rest, kernel peaks. */
function memoryTable(m: IngestMemory, until: string): string {
  const cg = m.cgroupLimitMB !== undefined;
  const rows: (string | number)[][] = [
    [`peak, sampled every second (first EVENT → ${until})`, ...memCells(m.peak, cg)],
    ["at the last OK", ...memCells(m.atLastOk, cg)],
  ];
  if (m.atRest) rows.push([`after ${m.atRest.seconds} s at rest`, ...memCells(m.atRest, cg)]);
  rows.push([
    "kernel's peak over the relay's life (VmHWM; cgroup max usage)",
    "",
    m.vmHwmMB ?? "",
    ...(cg ? [m.cgroupKernelPeakMB ?? ""] : []),
  ]);
  return table(
    ["relay memory", "RssAnon MB", "VmRSS MB", ...(cg ? [`cgroup usage MB (limit ${m.cgroupLimitMB})`] : [])],
    rows,
  );
}

/** The relay's CPU during the ingest per thread name, with what threads that ended used. */
function threadTable(r: E2EResult, accepted: number): string | undefined {
  const a = r.memory.marks.start;
  const b = ingestEnd(r);
  if (!a?.threads || !b?.threads || a.relayCpuS === undefined || b.relayCpuS === undefined || accepted === 0)
    return undefined;
  const rows: [string, number][] = Object.keys(b.threads).map((k) => [
    k,
    b.threads![k]! - (a.threads![k] ?? 0),
  ]);
  const live = rows.reduce((n, [, s]) => n + s, 0);
  rows.push(["(threads that ended)", Math.max(0, b.relayCpuS - a.relayCpuS - live)]);
  rows.sort((x, y) => y[1] - x[1]);
  return table(
    ["thread", "CPU s", "µs per accepted event"],
    rows.filter(([, s]) => s >= 0.01).map(([k, s]) => [k, round(s, 2), Math.round((s / accepted) * 1e6)]),
  );
}

export function e2eTables(r: E2EResult): string {
  const out: string[] = [];
  const mb = (r.dataset.signedBytes / 2 ** 20).toFixed(1);
  out.push(
    `relay ${r.url}; dataset ${r.dataset.events} events (${mb} MB JSON), ${r.dataset.authors} authors, seed ${r.dataset.seed}`,
  );
  const i = r.ingest;
  if (i) {
    out.push("", `### Ingest (${i.connections} connections × ${i.window} in flight)`, "");
    const reasons = Object.entries(i.rejectReasons)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ");
    out.push(
      table(
        ["metric", "value"],
        [
          ["events sent / answered", `${i.events} / ${i.answered}${ending(r)}`],
          [
            "accepted / duplicate / rejected",
            `${i.accepted} / ${i.duplicates} / ${i.rejected}${reasons ? ` (${reasons})` : ""}`,
          ],
          ["wall time (s)", i.seconds],
          ["accepted events/s (until the last OK)", fmtRate(i.acceptedPerSec)],
          ["answered events/s", fmtRate(i.answeredPerSec)],
          ...sustainedRows(r),
          [
            "OK latency p50 / p90 / p99 / max (ms)",
            `${i.okLatencyMs.p50} / ${i.okLatencyMs.p90} / ${i.okLatencyMs.p99} / ${i.okLatencyMs.max}`,
          ],
          ...cpuPerEvent(r, i.accepted),
        ],
      ),
    );
    if (r.ingestMemory)
      out.push("", memoryTable(r.ingestMemory, r.settled?.reported ? "no consumer lag" : "the last OK"));
    const threads = threadTable(r, i.accepted);
    if (threads)
      out.push(
        "",
        `Relay CPU during the ingest${r.settled?.reported ? " and the catch-up" : ""}, by thread:`,
        "",
        threads,
      );
  }
  if (r.skipped) out.push("", `No further phases: ${r.skipped}.`);
  if (r.query) out.push(...queryTables(r.query, "### Query mix"));
  const n = r.count;
  if (n) {
    out.push("", `### COUNT (${n.connections} connections × ${n.inflightPerConnection} in flight)`, "");
    out.push(
      `${n.completed} COUNTs answered in ${n.seconds} s: **${fmtRate(n.countPerSec)} COUNT/s**, ${n.withHll} with \`hll\`` +
        `${n.failed ? `, ${n.failed} CLOSED` : ""}${n.timedOut ? " (timed out)" : ""}`,
      "",
    );
    const rows: (string | number)[][] = n.byType
      .filter((t) => t.counts > 0)
      .map((t) => [t.type, t.counts, t.meanCount, t.withHll, t.ms.p50, t.ms.p99, t.ms.max]);
    rows.push(["all", n.completed, "", n.withHll, n.ms.p50, n.ms.p99, n.ms.max]);
    out.push(table(["count", "COUNTs", "mean count", "with hll", "p50 ms", "p99 ms", "max ms"], rows));
  }
  const s = r.search;
  if (s) {
    out.push("", `### Search (${s.connections} connections × ${s.inflightPerConnection} in flight)`, "");
    out.push(
      table(
        ["metric", "value"],
        [
          [
            "search REQs to EOSE",
            `${s.completed}${s.failed ? ` (${s.failed} CLOSED)` : ""}${s.timedOut ? " (timed out)" : ""}`,
          ],
          ["wall time (s)", s.seconds],
          ["REQ/s", fmtRate(s.reqPerSec)],
          [
            "EOSE p50 / p90 / p99 / max (ms)",
            `${s.eoseMs.p50} / ${s.eoseMs.p90} / ${s.eoseMs.p99} / ${s.eoseMs.max}`,
          ],
          [`mean results (limit ${s.limit})`, s.meanResults],
          s.checked > 0
            ? ["answers equal to the exact ranked answer", `${s.exact} of ${s.checked}`]
            : ["answers equal to the exact ranked answer", "not checked (--search-check to check)"],
        ],
      ),
    );
    if (s.wrong.length > 0) out.push("", "Answers that differ:", "", ...s.wrong.map((w) => `- ${w}`));
  }
  if (r.live) out.push(...liveTables(r.live, "### Live fanout"));
  const m = r.mixed;
  if (m) {
    out.push(
      "",
      `### Mixed: the query mix while ${m.live.subscribers} subscribers get ${m.live.targetRate} events/s`,
      "",
      `REQ p99 ${m.query.eoseMs.p99} ms over ${m.query.completed} REQs; live delivery p99 ${m.live.deliveryMs.p99} ms over ${m.live.delivered} deliveries.`,
    );
    out.push(...queryTables(m.query, "#### Its queries"), ...liveTables(m.live, "#### Its live deliveries"));
  }
  const marks = Object.entries(r.memory.marks);
  if (marks.length > 0) {
    out.push("", `### Memory and CPU (${r.memory.source})`, "");
    // From /proc also the anonymous/file split and PSS: LMDB's map is file pages, counted in RSS
    // once per overlapping map, so PSS is the number to compare between relays. CPU columns are
    // the seconds used since the previous mark (the phase that ended there).
    const proc = marks.some(([, m]) => m.anonMB !== undefined);
    const cg = marks.some(([, m]) => m.cgroupMB !== undefined);
    const cpu = marks.some(([, m]) => m.relayCpuS !== undefined);
    const head = [
      "when",
      "RSS MB",
      "peak RSS MB",
      ...(proc ? ["PSS MB", "anon MB", "file MB"] : []),
      ...(cg ? ["cgroup MB", "cgroup anon / file MB"] : []),
      ...(cpu ? ["relay CPU s", "load tool CPU s"] : []),
    ];
    const delta = (now: number | undefined, before: number | undefined) =>
      now === undefined || before === undefined ? "" : round(now - before, 1);
    const row = ([k, m]: [string, MemReading], i: number) => [
      k,
      m.rssMB,
      m.peakMB,
      ...(proc ? [m.pssMB ?? "", m.anonMB ?? "", m.fileMB ?? ""] : []),
      ...(cg ? [m.cgroupMB ?? "", `${m.cgroupAnonMB ?? ""} / ${m.cgroupFileMB ?? ""}`] : []),
      ...(cpu
        ? [
            i === 0 ? "" : delta(m.relayCpuS, marks[i - 1]![1].relayCpuS),
            i === 0 ? "" : delta(m.toolCpuS, marks[i - 1]![1].toolCpuS),
          ]
        : []),
    ];
    out.push(table(head, marks.map(row)));
  }
  return out.join("\n");
}

function queryTables(q: QueryResult, title: string): string[] {
  const rows: (string | number)[][] = q.byType.map((t) => [
    t.type,
    t.reqs,
    t.meanEvents,
    t.eoseMs.p50,
    t.eoseMs.p99,
    t.eoseMs.max,
  ]);
  rows.push(["all", q.completed, "", q.eoseMs.p50, q.eoseMs.p99, q.eoseMs.max]);
  return [
    "",
    `${title} (${q.connections} connections × ${q.inflightPerConnection} in flight)`,
    "",
    `${q.completed} REQs to EOSE in ${q.seconds} s: **${fmtRate(q.reqPerSec)} REQ/s**, ${fmtRate(q.eventsPerSec)} events/s returned` +
      `${q.failed ? `, ${q.failed} CLOSED` : ""}${q.timedOut ? " (timed out)" : ""}`,
    "",
    table(["query", "REQs", "events/REQ", "EOSE p50 ms", "EOSE p99 ms", "max ms"], rows),
  ];
}

function liveTables(l: LiveResult, title: string): string[] {
  return [
    "",
    `${title} (${l.subscribers} subscribers, ${l.events} events at ${l.targetRate}/s)`,
    "",
    table(
      ["metric", "value"],
      [
        ["subscriptions refused", l.subscribeFailed],
        ["publish rate achieved (events/s)", l.achievedRate],
        ["publish OK p50 / p99 (ms)", `${l.publishOkMs.p50} / ${l.publishOkMs.p99}`],
        ["publishes refused (OK false)", l.publishRejected],
        ["expected deliveries", l.expectedDeliveries],
        ["delivered / missed / unexpected", `${l.delivered} / ${l.missed} / ${l.unexpected}`],
        [
          "delivery latency p50 / p90 / p99 / max (ms)",
          `${l.deliveryMs.p50} / ${l.deliveryMs.p90} / ${l.deliveryMs.p99} / ${l.deliveryMs.max}`,
        ],
        ["deliveries/s", fmtRate(l.deliveriesPerSec)],
      ],
    ),
  ];
}
