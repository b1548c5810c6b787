// Prometheus text exposition of what an operator watches: connections, frames by verb, events
// accepted and refused by reason, writer batches, verification, queries by index, live
// subscriptions, queued outbound bytes and memory. Built on request from live counters; the
// data's side (writer, derived indexes, storage full, retention, handover, cluster) is in
// metrics-data.ts, the text format in exposition.ts.

import { heapStats } from "bun:jsc";
import type { RelayContext } from "../context.ts";
import { remoteWalks, searchPaths } from "../search/engine.ts";
import { byLabel, Exposition, type Labels } from "./exposition.ts";
import { memoryParts } from "./memory.ts";
import {
  clusterMetrics,
  consumerMetrics,
  fullMetrics,
  handoverMetrics,
  retentionMetrics,
  writerMetrics,
} from "./metrics-data.ts";

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
