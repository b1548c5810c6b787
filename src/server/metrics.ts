// Prometheus text exposition of what an operator watches: connections, frames by verb, events
// accepted and refused by reason, writer batches, verification, queries by index, live
// subscriptions, queued outbound bytes and memory. Built on request from live counters.

import { heapStats } from "bun:jsc";
import type { ClusterStatus } from "../cluster/node.ts";
import type { RelayContext } from "../context.ts";
import { predecessorDrain } from "../handover/files.ts";
import type { Pruner } from "../retention/pruner.ts";
import { remoteWalks, searchPaths } from "../search/engine.ts";
import { diskUse } from "../store/disk-use.ts";
import { memoryParts } from "./memory.ts";

type Labels = Record<string, string>;

class Exposition {
  private lines: string[] = [];
  metric(name: string, type: "counter" | "gauge", help: string, samples: [Labels, number][]): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) {
      const l = Object.entries(labels)
        .map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
        .join(",");
      this.lines.push(`${name}${l ? `{${l}}` : ""} ${Number.isFinite(value) ? value : 0}`);
    }
  }
  text(): string {
    return `${this.lines.join("\n")}\n`;
  }
}

const byLabel = (rec: Record<string, number>, label: string): [Labels, number][] =>
  Object.entries(rec).map(([k, v]) => [{ [label]: k }, v]);

/** A listener of its own for /metrics (metrics.port), e.g. on a private address. */
export function startMetricsServer(ctx: RelayContext): ReturnType<typeof Bun.serve> | undefined {
  const c = ctx.config;
  if (!c["metrics.enabled"] || c["metrics.port"] === 0) return undefined;
  return Bun.serve({
    hostname: c["metrics.host"],
    port: c["metrics.port"],
    fetch(req) {
      const ok = ctx.config["metrics.enabled"] && new URL(req.url).pathname === ctx.config["metrics.path"];
      return ok
        ? new Response(renderMetrics(ctx), {
            headers: { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" },
          })
        : new Response("not found\n", { status: 404 });
    },
  });
}

/**
 * A handover (handover/): whether this process drains, and a draining predecessor's connections
 * left (it no longer accepts, so its own /metrics is out of reach on the shared port).
 */
function handoverMetrics(x: Exposition, ctx: RelayContext): void {
  const d = ctx.draining;
  x.metric(
    "relay_draining",
    "gauge",
    "1 while this process drains after handing over to a successor (serve --takeover).",
    [[{ pid: String(process.pid) }, d ? 1 : 0]],
  );
  const p = d ? undefined : predecessorDrain(ctx.config.data);
  if (!p) return;
  const pid = String(p.pid);
  x.metric("relay_predecessor_connections", "gauge", "Connections a draining predecessor still serves.", [
    [{ pid }, p.connections],
  ]);
  x.metric("relay_predecessor_drain_seconds_left", "gauge", "Seconds until it closes those left.", [
    [{ pid }, Math.max(0, Math.round((p.deadline - Date.now()) / 1000))],
  ]);
}

/** Retention rules and the disk budget (src/retention/); the data's use of the disk, measured now. */
function retentionMetrics(x: Exposition, ctx: RelayContext, r: Pruner): void {
  x.metric(
    "relay_events_removed_total",
    "counter",
    "Events removed since start by a retention rule (rule) or evicted for the disk budget (budget).",
    [
      [{ by: "rule" }, r.removedByRule],
      [{ by: "budget" }, r.removedByBudget],
    ],
  );
  x.metric("relay_disk_budget_bytes", "gauge", "The disk budget (store.maxDiskGb; 0: none).", [
    [{}, Math.floor(ctx.config["store.maxDiskGb"] * 2 ** 30)],
  ]);
  x.metric(
    "relay_disk_budget_full",
    "gauge",
    "1 while the data is over the disk budget with nothing left to evict (events refused with 'error: storage full').",
    [[{}, r.full === undefined ? 0 : 1]],
  );
  let use: ReturnType<typeof diskUse>;
  try {
    use = diskUse(ctx.store);
  } catch {
    return; // a data file that cannot be read now: the budget's own pass logs it
  }
  x.metric(
    "relay_disk_in_use_bytes",
    "gauge",
    "What the disk budget counts: the pages in use in data.mdb and derived/data.mdb (file pages less free pages).",
    [[{}, use.inUse]],
  );
  x.metric(
    "relay_disk_free_bytes",
    "gauge",
    "Free pages of the data files (LMDB's free lists and the files past their last page), reused by later writes.",
    [[{}, use.free]],
  );
  x.metric("relay_disk_file_bytes", "gauge", "Length of data.mdb and derived/data.mdb together.", [
    [{}, use.fileBytes],
  ]);
}

/** This node's part in a NATS JetStream cluster (docs/cluster.md). */
function clusterMetrics(x: Exposition, st: ClusterStatus): void {
  const node = { node: st.nodeId, stream: st.stream };
  x.metric("relay_cluster_connected", "gauge", "1 while connected to NATS.", [[node, st.connected ? 1 : 0]]);
  x.metric("relay_cluster_stream_seq", "gauge", "Last sequence of the cluster stream when last asked.", [
    [node, st.streamSeq],
  ]);
  x.metric(
    "relay_cluster_consumer_lag",
    "gauge",
    "Stream messages this node's consumer has not applied yet.",
    [[node, st.consumerLag]],
  );
  x.metric("relay_cluster_ack_floor", "gauge", "Stream sequence up to which this node applied everything.", [
    [node, st.ackFloor],
  ]);
  x.metric("relay_cluster_outbox", "gauge", "Events committed here and not yet acknowledged by the stream.", [
    [node, st.outbox],
  ]);
  x.metric("relay_cluster_published_total", "counter", "Events this node appended to the stream.", [
    [node, st.published],
  ]);
  x.metric("relay_cluster_applied_total", "counter", "Stream messages this node applied.", [
    [node, st.applied],
  ]);
  x.metric("relay_cluster_last_error", "gauge", "The last cluster error, as a label (empty = none).", [
    [{ ...node, error: st.lastError }, st.lastError ? 1 : 0],
  ]);
}

export function renderMetrics(ctx: RelayContext): string {
  const x = new Exposition();
  trafficMetrics(x, ctx);
  writerMetrics(x, ctx);
  verifyMetrics(x, ctx);
  readMetrics(x, ctx);
  consumerMetrics(x, ctx);
  ingestMetrics(x, ctx);
  fullMetrics(x, ctx);
  if (ctx.retention) retentionMetrics(x, ctx, ctx.retention);
  if (ctx.cluster) clusterMetrics(x, ctx.cluster.status);
  processMetrics(x, ctx);
  return x.text();
}

/** Connections, frames, and events accepted and refused. */
function trafficMetrics(x: Exposition, ctx: RelayContext): void {
  const c = ctx.counters;
  x.metric("relay_connections", "gauge", "Open WebSocket connections.", [[{}, ctx.conns.size]]);
  handoverMetrics(x, ctx);
  x.metric(
    "relay_frames_in_total",
    "counter",
    "Client frames received, by verb.",
    byLabel(c.framesIn, "verb"),
  );
  x.metric(
    "relay_frames_out_total",
    "counter",
    "Frames sent to clients, by verb.",
    byLabel(c.framesOut, "verb"),
  );
  x.metric("relay_events_accepted_total", "counter", "Events accepted (stored or ephemeral).", [
    [{}, c.eventsAccepted],
  ]);
  x.metric(
    "relay_events_accepted_by_kind_total",
    "counter",
    "Events accepted, by kind.",
    byLabel(c.acceptedByKind, "kind"),
  );
  x.metric(
    "relay_events_rejected_total",
    "counter",
    "Events refused, by reason prefix.",
    byLabel(c.eventsRejected, "reason"),
  );
  x.metric(
    "relay_connections_refused_total",
    "counter",
    "WebSocket connections refused, by reason.",
    byLabel(c.connectionsRefused, "reason"),
  );
}

/** The log and its writer. */
function writerMetrics(x: Exposition, ctx: RelayContext): void {
  const w = ctx.writer;
  x.metric("relay_stored_events", "gauge", "Events in the store.", [
    [{}, (ctx.store.events.getStats() as { entryCount: number }).entryCount],
  ]);
  x.metric("relay_writer_batches_total", "counter", "Write transactions committed.", [[{}, w.batches]]);
  x.metric("relay_writer_batch_size", "gauge", "Events and tasks in the last write batch.", [
    [{}, w.lastBatchSize],
  ]);
  x.metric("relay_writer_commit_seconds", "gauge", "Duration of the last commit.", [
    [{}, w.lastCommitMs / 1000],
  ]);
}

/** Signature verification. */
function verifyMetrics(x: Exposition, ctx: RelayContext): void {
  x.metric("relay_verify_backend", "gauge", "Signature verification backend in use.", [
    [{ backend: ctx.verifyPool.backend.name }, 1],
  ]);
  x.metric("relay_verify_threads", "gauge", "Verification worker threads.", [[{}, ctx.verifyPool.threads]]);
  x.metric("relay_verify_batches_total", "counter", "Batches sent to the verify threads.", [
    [{}, ctx.verifyPool.batches],
  ]);
  x.metric(
    "relay_verify_batched_events_total",
    "counter",
    "Events in the batches sent to the verify threads.",
    [[{}, ctx.verifyPool.batchedEvents]],
  );
  x.metric("relay_verify_pending", "gauge", "Events waiting for verification.", [
    [{}, ctx.verifyPool.pending],
  ]);
}

/** Stored queries, search, live subscriptions. */
function readMetrics(x: Exposition, ctx: RelayContext): void {
  const c = ctx.counters;
  x.metric(
    "relay_queries_total",
    "counter",
    "Stored queries, by the index of each filter.",
    byLabel(c.queriesByIndex, "index"),
  );
  x.metric(
    "relay_query_seconds_total",
    "counter",
    "Time spent answering stored queries, by the index of the first filter.",
    byLabel(c.querySeconds, "index"),
  );
  x.metric(
    "relay_reads_waiting",
    "gauge",
    "REQs and COUNTs waiting for a later turn of the event loop while events are being written (query.turnBudgetUs).",
    [[{}, ctx.reads.queued]],
  );
  x.metric("relay_reads_deferred_total", "counter", "REQs and COUNTs that waited for a later turn.", [
    [{}, ctx.reads.deferred],
  ]);
  x.metric(
    "relay_search_answers_total",
    "counter",
    "Search filters answered from the high-impact lists alone (high) or by ranking every match (all).",
    [
      [{ path: "high" }, searchPaths.high],
      [{ path: "all" }, searchPaths.all],
    ],
  );
  x.metric(
    "relay_search_remote_walks_total",
    "counter",
    "Search walks over the postings run on the consumers' thread (done), or sent there and run on the main thread after it failed (failed).",
    [
      [{ outcome: "done" }, remoteWalks.count],
      [{ outcome: "failed" }, remoteWalks.failed],
    ],
  );
  x.metric("relay_live_subscriptions", "gauge", "Open subscriptions.", [[{}, ctx.live.size]]);
  let queued = 0;
  for (const conn of ctx.conns) queued += conn.ws.getBufferedAmount();
  x.metric("relay_outbound_queued_bytes", "gauge", "Bytes queued to clients.", [[{}, queued]]);
  x.metric("relay_expiring_events", "gauge", "Stored events with an expiration time.", [
    [{}, ctx.expiration.pending],
  ]);
}

/** The derived indexes: their lag, the backlog's bound and pace, the consumers' thread. */
function consumerMetrics(x: Exposition, ctx: RelayContext): void {
  const lag = ctx.consumers.runner.lag();
  const byConsumer = (f: (l: (typeof lag)[number]) => number): [Labels, number][] =>
    lag.map((l) => [{ consumer: l.name }, f(l)]);
  x.metric(
    "relay_consumer_lag_events",
    "gauge",
    "Committed events a derived index (REQ indexes, search, NIP-45 counts, API counters) has not applied yet.",
    byConsumer((l) => l.events),
  );
  x.metric(
    "relay_consumer_lag_seconds",
    "gauge",
    "Age of the oldest committed event a derived index has not applied yet.",
    byConsumer((l) => l.seconds),
  );
  x.metric(
    "relay_consumer_watermark",
    "gauge",
    "Serial up to which a derived index is on disk.",
    byConsumer((l) => l.watermark),
  );
  x.metric(
    "relay_consumer_batches_total",
    "counter",
    "Batches a derived index has applied since start.",
    byConsumer((l) => l.batches),
  );
  x.metric(
    "relay_consumer_apply_seconds",
    "gauge",
    "Duration of a derived index's last batch.",
    byConsumer((l) => l.lastApplyMs / 1000),
  );
  const runner = ctx.consumers.runner;
  x.metric(
    "relay_consumer_backlog_bytes",
    "gauge",
    "Stored bytes of the committed events the derived indexes have not applied yet.",
    [[{}, runner.waitingBytes()]],
  );
  x.metric(
    "relay_consumer_backlog_limit_events",
    "gauge",
    "The backlog's bound in events (consumers.maxBacklog; 0: none): past it the writer waits.",
    [[{}, ctx.config["consumers.maxBacklog"]]],
  );
  x.metric(
    "relay_consumer_backlog_peak_events",
    "gauge",
    "The most committed events that waited for the derived indexes at once since start.",
    [[{}, runner.backlogBound.peakEvents]],
  );
  x.metric(
    "relay_writer_backlog_waits_total",
    "counter",
    "Times the writer waited for the derived indexes' backlog to drop under its bound.",
    [[{}, runner.backlogBound.waits]],
  );
  x.metric(
    "relay_writer_backlog_wait_seconds_total",
    "counter",
    "Time the writer spent waiting for the derived indexes' backlog.",
    [[{}, runner.backlogBound.waitedMs / 1000]],
  );
  x.metric(
    "relay_writer_paced_total",
    "counter",
    "Times the writer waited a moment because the derived indexes' backlog filled faster than they apply (consumers/pace.ts).",
    [[{}, runner.backlogBound.pace.delays]],
  );
  x.metric("relay_writer_paced_seconds_total", "counter", "Time the writer spent in those waits.", [
    [{}, runner.backlogBound.pace.delayedMs / 1000],
  ]);
  const took = runner.thread.took;
  if (took)
    x.metric(
      "relay_consumer_thread_seconds_total",
      "counter",
      "Time the consumers' thread spent, by step: reading and parsing the log, each index's adding of events and writing of its batch, the commit, collections.",
      Object.entries(took).map(([step, ms]) => [{ step }, ms / 1000]),
    );
}

/** EVENTs read and not yet answered, and the connections paused for them. */
function ingestMetrics(x: Exposition, ctx: RelayContext): void {
  const pending = ctx.pending;
  x.metric("relay_ingest_pending_events", "gauge", "EVENTs read from clients and not yet answered.", [
    [{}, pending.events],
  ]);
  x.metric("relay_ingest_pending_bytes", "gauge", "Their approximate bytes.", [[{}, pending.bytes]]);
  x.metric(
    "relay_ingest_paused_connections",
    "gauge",
    "Connections not being read while the pending EVENTs are at their bound.",
    [[{}, pending.pausedNow]],
  );
  x.metric("relay_ingest_pauses_total", "counter", "Times a connection was paused for that.", [
    [{}, pending.pauses],
  ]);
}

/** Storage full, for the log and the derived indexes. */
function fullMetrics(x: Exposition, ctx: RelayContext): void {
  const w = ctx.writer;
  const runner = ctx.consumers.runner;
  const full = w.full;
  const failure = runner.failure;
  x.metric(
    "relay_storage_full",
    "gauge",
    "1 while writes fail for lack of room (disk or LMDB map full), by environment: the log (events are refused) or derived (the derived indexes wait).",
    [
      [{ store: "log" }, full.full ? 1 : 0],
      [{ store: "derived" }, failure?.full ? 1 : 0],
    ],
  );
  x.metric(
    "relay_storage_full_refused_total",
    "counter",
    "Events refused with 'error: storage full' since start.",
    [[{}, full.refused]],
  );
  x.metric(
    "relay_storage_full_episodes_total",
    "counter",
    "Times the log's storage became full since start.",
    [[{}, full.episodes]],
  );
  x.metric(
    "relay_consumer_failing",
    "gauge",
    "1 while the derived indexes cannot apply their batches (they catch up once they can).",
    [[{}, failure ? 1 : 0]],
  );
  x.metric(
    "relay_consumer_failed_batches_total",
    "counter",
    "Batches of the derived indexes that failed to apply since start (each is tried again).",
    [[{}, runner.failedBatches]],
  );
}

/** Memory and uptime. */
function processMetrics(x: Exposition, ctx: RelayContext): void {
  const runner = ctx.consumers.runner;
  x.metric("process_resident_memory_bytes", "gauge", "Resident set size.", [[{}, process.memoryUsage.rss()]]);
  const heap = heapStats();
  const parts = memoryParts(heap);
  if (parts.anon !== undefined)
    x.metric(
      "process_anonymous_memory_bytes",
      "gauge",
      "Resident anonymous memory (RssAnon): what the relay allocated, without the data files' pages.",
      [[{}, parts.anon]],
    );
  const allocated: [Labels, number][] = [];
  if (parts.runtime !== undefined) allocated.push([{ allocator: "runtime" }, parts.runtime]);
  if (parts.libc !== undefined) allocated.push([{ allocator: "libc" }, parts.libc]);
  if (allocated.length > 0)
    x.metric(
      "relay_allocated_bytes",
      "gauge",
      "Bytes allocated and not freed, by allocator (allocated is not always resident): runtime (every thread's JavaScript heap, strings, buffers), libc (native modules: LMDB's page copies of write transactions).",
      allocated,
    );
  const threadHeap = runner.thread.heap;
  const heaps: [Labels, { size: number; capacity: number }][] = [
    [{ thread: "main" }, { size: heap.heapSize, capacity: heap.heapCapacity }],
  ];
  if (threadHeap) heaps.push([{ thread: "consumers" }, threadHeap]);
  x.metric(
    "relay_js_heap_bytes",
    "gauge",
    "JavaScript heap in use, by thread (the consumers' thread as of its last batch).",
    heaps.map(([l, h]) => [l, h.size]),
  );
  x.metric(
    "relay_js_heap_capacity_bytes",
    "gauge",
    "JavaScript heap reserved, by thread.",
    heaps.map(([l, h]) => [l, h.capacity]),
  );

  x.metric("process_uptime_seconds", "gauge", "Seconds since start.", [
    [{}, (Date.now() - ctx.startedAt) / 1000],
  ]);
}
