// Human-readable tables of an end-to-end run (markdown-compatible, so they paste into
// docs/performance.md as they are), and the machine description that goes with every result.
import { cpus, totalmem } from "node:os";
import type { E2EResult } from "./e2e.ts";
import type { MemReading } from "./rss.ts";
import { fmtRate, table } from "./stats.ts";

export function machine(): Record<string, string | number> {
  return {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGB: Math.round(totalmem() / 2 ** 30),
    os: `${process.platform} ${process.arch}`,
    bun: Bun.version,
  };
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
          ["events sent / answered", `${i.events} / ${i.answered}${i.timedOut ? " (timed out)" : ""}`],
          [
            "accepted / duplicate / rejected",
            `${i.accepted} / ${i.duplicates} / ${i.rejected}${reasons ? ` (${reasons})` : ""}`,
          ],
          ["wall time (s)", i.seconds],
          ["accepted events/s", fmtRate(i.acceptedPerSec)],
          ["answered events/s", fmtRate(i.answeredPerSec)],
          [
            "OK latency p50 / p90 / p99 / max (ms)",
            `${i.okLatencyMs.p50} / ${i.okLatencyMs.p90} / ${i.okLatencyMs.p99} / ${i.okLatencyMs.max}`,
          ],
        ],
      ),
    );
  }
  const q = r.query;
  if (q) {
    out.push("", `### Query mix (${q.connections} connections × ${q.inflightPerConnection} in flight)`, "");
    out.push(
      `${q.completed} REQs to EOSE in ${q.seconds} s: **${fmtRate(q.reqPerSec)} REQ/s**, ${fmtRate(q.eventsPerSec)} events/s returned` +
        `${q.failed ? `, ${q.failed} CLOSED` : ""}${q.timedOut ? " (timed out)" : ""}`,
      "",
    );
    const rows: (string | number)[][] = q.byType.map((t) => [
      t.type,
      t.reqs,
      t.meanEvents,
      t.eoseMs.p50,
      t.eoseMs.p99,
      t.eoseMs.max,
    ]);
    rows.push(["all", q.completed, "", q.eoseMs.p50, q.eoseMs.p99, q.eoseMs.max]);
    out.push(table(["query", "REQs", "events/REQ", "EOSE p50 ms", "EOSE p99 ms", "max ms"], rows));
  }
  const l = r.live;
  if (l) {
    out.push(
      "",
      `### Live fanout (${l.subscribers} subscribers, ${l.events} events at ${l.targetRate}/s)`,
      "",
    );
    out.push(
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
    );
  }
  const marks = Object.entries(r.memory.marks);
  if (marks.length > 0) {
    out.push("", `### Memory (${r.memory.source})`, "");
    // From /proc also the anonymous/file split and PSS: LMDB's map is file pages, counted in RSS
    // once per overlapping map, so PSS is the number to compare between relays.
    const proc = marks.some(([, m]) => m.anonMB !== undefined);
    const head = ["when", "RSS MB", "peak RSS MB", ...(proc ? ["PSS MB", "anon MB", "file MB"] : [])];
    const row = ([k, m]: [string, MemReading]) => [
      k,
      m.rssMB,
      m.peakMB,
      ...(proc ? [m.pssMB ?? "", m.anonMB ?? "", m.fileMB ?? ""] : []),
    ];
    out.push(table(head, marks.map(row)));
  }
  return out.join("\n");
}
