// /metrics for the data: the log's writer, the derived indexes (their lag, backlog, thread and
// failures), storage full, retention and the disk budget, a handover, the cluster.
import type { ClusterStatus } from "../cluster/node.ts";
import type { RelayContext } from "../context.ts";
import { predecessorDrain } from "../handover/files.ts";
import type { Pruner } from "../retention/pruner.ts";
import { diskUse } from "../store/disk-use.ts";
import type { Exposition, Labels } from "./exposition.ts";

/**
 * A handover (handover/): whether this process drains, and a draining predecessor's connections
 * left (it no longer accepts, so its own /metrics is out of reach on the shared port).
 */
export function handoverMetrics(x: Exposition, ctx: RelayContext): void {
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
export function retentionMetrics(x: Exposition, ctx: RelayContext, r: Pruner): void {
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
  x.metric(
    "relay_disk_target_bytes",
    "gauge",
    "The data in use the budget keeps under now: its low-water mark, or less where the files need the room (0: no budget).",
    [[{}, r.budget.target]],
  );
  x.metric(
    "relay_disk_holding",
    "gauge",
    "1 while the data files are at the budget's bound and events wait for eviction to make room.",
    [[{}, r.budget.holding ? 1 : 0]],
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
  x.metric(
    "relay_disk_by_file_bytes",
    "gauge",
    "Each data file's pages in use, free pages and length (what the three totals above add up).",
    use.files.flatMap((f) => [
      [{ file: f.file, part: "in_use" }, f.inUse] as [Labels, number],
      [{ file: f.file, part: "free" }, f.free] as [Labels, number],
      [{ file: f.file, part: "length" }, f.fileBytes] as [Labels, number],
    ]),
  );
}

/** This node's part in a NATS JetStream cluster (docs/cluster.md). */
export function clusterMetrics(x: Exposition, st: ClusterStatus): void {
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

/** The log and its writer. */
export function writerMetrics(x: Exposition, ctx: RelayContext): void {
  const w = ctx.writer;
  x.metric("relay_stored_events", "gauge", "Events in the store.", [
    [{}, (ctx.store.events.getStats() as { entryCount: number }).entryCount],
  ]);
  x.metric("relay_writer_batches_total", "counter", "Write transactions committed.", [[{}, w.batches]]);
  x.metric(
    "relay_writer_disk_hold_seconds_total",
    "counter",
    "Time events waited for the disk budget's data files to have room (eviction catching up at their bound).",
    [[{}, w.held.ms / 1000]],
  );
  x.metric("relay_writer_batch_size", "gauge", "Events and tasks in the last write batch.", [
    [{}, w.lastBatchSize],
  ]);
  x.metric("relay_writer_commit_seconds", "gauge", "Duration of the last commit.", [
    [{}, w.lastCommitMs / 1000],
  ]);
}

/** The derived indexes: their lag, the backlog's bound and pace, the consumers' thread. */
export function consumerMetrics(x: Exposition, ctx: RelayContext): void {
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

/** Storage full, for the log and the derived indexes. */
export function fullMetrics(x: Exposition, ctx: RelayContext): void {
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
