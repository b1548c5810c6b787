// Wires the pipeline together: store → writer → live fanout, and the server in front.
// `startRelay` is what `relay serve` and the tests call.
import { mkdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { Server } from "bun";
import type { Api } from "./api/start.ts";
import { startApi } from "./api/start.ts";
import { ClusterNode } from "./cluster/node.ts";
import type { Config } from "./config/schema.ts";
import { openConsumers } from "./consumers/registry.ts";
import type { RelayContext } from "./context.ts";
import { newCounters } from "./context.ts";
import { broadcast } from "./fanout/broadcast.ts";
import { LiveIndex } from "./fanout/live-index.ts";
import type { Subscription } from "./fanout/subscription.ts";
import { keepNewest } from "./indexes/newest.ts";
import { PendingGate } from "./ingest/pending.ts";
import { PolicyPlugin } from "./ingest/plugin.ts";
import { ReadTurns } from "./ingest/read-turns.ts";
import { releaseDirtyPages } from "./lmdb/dirty-pages.ts";
import { DirLocked, lockDir } from "./lmdb/lock.ts";
import { releasePages } from "./lmdb/residency.ts";
import { configureLog, log } from "./log.ts";
import { Moderation } from "./manage/moderation.ts";
import { ownUrlCheck } from "./nostr/relay-url.ts";
import { runByAnotherProgram } from "./platform.ts";
import { ReaderPool } from "./readers/pool.ts";
import { Pruner } from "./retention/pruner.ts";
import { matchSearch } from "./search/match.ts";
import { stopWhenQueueEmpty } from "./server/accept-queue.ts";
import { inList } from "./server/client-ip.ts";
import type { Conn, ConnData } from "./server/connection.ts";
import { startMetricsServer } from "./server/metrics.ts";
import { QuietTrim } from "./server/quiet-trim.ts";
import { RateLimiter } from "./server/ratelimit.ts";
import { RefusalSummary } from "./server/refusals.ts";
import { startServer } from "./server/server.ts";
import { closeStore, DERIVED_DIR, openStore, syncDerived } from "./store/store.ts";
import { Writer } from "./store/writer.ts";
import { createVerifyPool } from "./verify/pool.ts";

export interface Relay {
  ctx: RelayContext;
  server: Server<ConnData>;
  conns: Set<Conn>;
  /** ws://host:port as actually bound */
  url: string;
  /** Stops accepting, closes connections, flushes the writer and closes LMDB. */
  stop(): Promise<void>;
  /**
   * Hands the directory to a successor (handover/): the consumers, the retention pruner, the
   * cluster node and the metrics port stop here and the lock is released; connections are
   * still accepted and served, and their events written beside the successor.
   */
  handOver(): Promise<void>;
  /** Takes the directory back after `handOver` (the successor died before it listened). */
  takeBack(): Promise<void>;
  /** Stops accepting connections (once none waits to be accepted); those open are served on. */
  stopAccepting(): Promise<void>;
  /** How often to look for other processes' commits (the default: every 250 ms). */
  followEvery(ms: number): void;
}

/** How often the relay looks whether another process (`relay import`, `relay delete`) wrote. */
export const POLL_MS = 250;
/** Memory is given back after a burst of writes once nothing has committed for this long. */
const QUIET_MS = 1000;
/** ... and at most this often (a full collection of the heap costs ~20 ms). */
const QUIET_GAP_MS = 10_000;

/** Takes the data directory for this relay, or says which process has it. */
function lockData(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  try {
    return lockDir(dir, "serve");
  } catch (e) {
    if (!(e instanceof DirLocked)) throw e;
    throw new Error(
      `${e.message}; one relay serves a data directory: stop that one first, or give this one another --data`,
    );
  }
}

export interface StartOptions {
  /**
   * The directory's lock, already taken from a predecessor that handed it over (handover/):
   * the port is then shared with it (SO_REUSEPORT) instead of checked free first.
   */
  takenOver?: () => void;
}

/**
 * Reader threads for `query.readers`; -1: one per core past the two that the thread serving the
 * sockets and the consumers' thread keep busy, at most four. Why not on two cores: there a reader
 * thread measured no better in the mixed phase's REQ tail, a worse live tail and up to twice the
 * CPU a REQ (docs/performance/2026-12.md, "Reader threads").
 */
function readerThreads(n: number): number {
  return n >= 0 ? n : Math.min(4, Math.max(0, availableParallelism() - 2));
}

export function startRelay(config: Config, o: StartOptions = {}): Relay {
  configureLog({ level: config["log.level"], format: config["log.format"] });
  const unlock = o.takenOver ?? lockData(config.data);
  try {
    return startLocked(config, unlock, o.takenOver !== undefined);
  } catch (e) {
    unlock();
    throw e;
  }
}

/** `locked`: the release of the directory's lock, which `takeBack` may take again. */
function startLocked(config: Config, locked: () => void, sharePort: boolean): Relay {
  let unlock = locked;
  const backend = config["verify.backend"];
  const verifyPool = createVerifyPool({
    threads: config["verify.threads"] === -1 ? undefined : config["verify.threads"],
    backend,
    libraryPath: config["verify.libraryPath"] || undefined,
    batchSize: config["verify.batchSize"],
  });
  // The derived environment through a writable map (store.ts, room.ts), natively on
  // Linux: under an emulator (qemu-user, the release's smoke tests) read-only maps of a fixed
  // size are what is known to work (map-size.ts).
  const writeMap = process.platform === "linux" && runByAnotherProgram() === undefined;
  const store = openStore(config.data, { mapSizeGb: config["store.mapSizeGb"], writeMap });
  if (store.derivedTorn)
    log.warn(
      "derived indexes removed and rebuilt from the log: the machine went down while they were written without syncing",
      { dir: `${config.data}/${DERIVED_DIR}` },
    );
  const consumers = openConsumers(store, config, {
    thread: config["consumers.thread"],
    log: (line) => log.info(line),
    logError: (line) => log.error(line),
  });
  const { expiration, runner } = consumers;
  // Every write to this store passes this process's writer (its own, and others' it follows).
  keepNewest(store);
  const live = new LiveIndex<Subscription>(consumers.search ? matchSearch : undefined);
  const moderation = new Moderation(store);
  // Retention rules and the disk budget: refusals in the writer's queue order, removals as its tasks.
  const pruner = new Pruner(store, () => ctx.config);
  // The listening port is known only once the server is up (port 0 picks one).
  let isOwnUrl: (url: string) => boolean = () => false;
  // Set once the port is known (the default node id names it); nothing connects without a URL.
  let cluster: ClusterNode | undefined;
  // The API's trending window, fed below from every commit; set once the indexers run.
  let api: Api | undefined;
  const writer = new Writer(
    store,
    // follow: what `relay import` or `relay delete` commit beside the relay comes through here
    // too, for the consumers, live subscribers and readers alike.
    {
      maxBatch: config["writer.maxBatch"],
      isOwnUrl: (url) => isOwnUrl(url),
      refuse: (e) => moderation.banned(e) ?? pruner.refuse(e),
      follow: true,
      backlog: () => runner.backlog(),
      hold: () => pruner.hold(),
    },
    (stored, removed, high) => {
      // The consumers' views first: a subscriber told of an event can search for it at once.
      runner.committed(stored, removed, high);
      for (const s of stored) broadcast(live, s.event, s.json, s.serial);
      cluster?.committed(stored);
      api?.committed(stored, removed);
    },
  );
  // The consumers' trims of the removal log are the writer's tasks: one writer of the log.
  runner.trimBy((run) => writer.task(run));

  runner.start();
  const ctx: RelayContext = {
    config,
    store,
    writer,
    live,
    verifier: verifyPool.backend,
    verifyPool,
    counters: newCounters(),
    startedAt: Date.now(),
    isOwnUrl: (url) => isOwnUrl(url),
    expiration,
    consumers,
    rates: new RateLimiter(
      () => ctx.config,
      (ip) => inList(ctx.config["rate.exemptIps"], ip),
    ),
    conns: new Set(),
    pending: new PendingGate(config["writer.maxPending"], config["writer.maxPendingMb"] * 2 ** 20),
    reads: new ReadTurns(config["query.turnBudgetUs"] / 1000, () => ctx.pending.events > 0),
    readers:
      readerThreads(config["query.readers"]) > 0
        ? new ReaderPool({
            path: store.path,
            store: { mapSizeGb: config["store.mapSizeGb"], writeMap },
            threads: readerThreads(config["query.readers"]),
            timeoutMs: config["query.readerTimeoutMs"],
            log: (line) => log.warn(line),
          })
        : undefined,
    moderation,
    retention: pruner,
    plugin: config["policy.plugin"]
      ? new PolicyPlugin({
          command: config["policy.plugin"],
          timeoutMs: () => ctx.config["policy.pluginTimeoutMs"],
          failOpen: () => ctx.config["policy.pluginFailOpen"],
          log: (m) => log.warn(m, { plugin: config["policy.plugin"] }),
        })
      : undefined,
  };
  ctx.api = api = startApi(config, consumers, store);
  const server = startServer(ctx, sharePort);
  let metricsServer = startMetricsServer(ctx);
  const conns = ctx.conns;
  const port = server.port ?? config.port;
  isOwnUrl = ownUrlCheck(config.host, port, () => ctx.config.publicUrl);
  pruner.start(writer);
  const joinCluster = () => {
    if (!config["cluster.natsUrl"]) return;
    cluster = new ClusterNode(config, store, writer, (e, json) => broadcast(live, e, json), port);
    ctx.cluster = cluster;
    cluster.start();
  };
  joinCluster();
  const summarySeconds = config["log.summarySeconds"];
  const refusals = new RefusalSummary(ctx.counters);
  const host = server.hostname?.includes(":") ? `[${server.hostname}]` : server.hostname;
  const timers = [
    setInterval(() => {
      // A purge that cannot commit (storage full) is tried again at the next tick.
      if (expiration.pending > 0)
        void writer.task((s) => expiration.purge(s, Date.now() / 1000, 10_000)).catch(() => {});
    }, config["expiration.purgeIntervalSeconds"] * 1000),
    setInterval(() => ctx.rates.sweep(), 60_000),
    setInterval(() => {
      const r = refusals.next();
      if (r) log.info(`refused ${r.total} in ${summarySeconds} s`, r.byReason);
    }, summarySeconds * 1000),
  ];
  let poll = setInterval(() => writer.poll(), POLL_MS);
  const release = config["store.releasePagesSeconds"];
  const dataFiles = [config.data, join(config.data, DERIVED_DIR)];
  if (release > 0) timers.push(setInterval(() => releasePages(dataFiles), release * 1000));
  // Once a burst of writes is over and applied: memory back within a second or two of it.
  const quiet = new QuietTrim({
    minGapMs: QUIET_GAP_MS,
    // client frames too: the trim waits for reads to pause (why: quiet-trim.ts)
    activity: () => {
      let n = writer.batches;
      for (const k in ctx.counters.framesIn) n += ctx.counters.framesIn[k]!;
      return n;
    },
    caughtUp: () => runner.waitingEvents() === 0,
    trim: () => {
      const t = performance.now();
      Bun.gc(true);
      if (release > 0) releasePages(dataFiles);
      const dirty = releaseDirtyPages([
        { env: store.env, dir: config.data },
        { env: store.derived, dir: join(config.data, DERIVED_DIR) },
      ]);
      log.debug("memory given back after a burst of writes", {
        ms: Math.round(performance.now() - t),
        lmdbDirtyPagesMb: dirty ? Math.round(dirty.bytes / 2 ** 20) : "n/a",
      });
    },
  });
  timers.push(setInterval(() => quiet.tick(performance.now()), QUIET_MS));
  let stopping: Promise<void> | undefined;
  let owner = true;
  return {
    ctx,
    server,
    conns,
    url: `ws://${host}:${server.port}`,
    followEvery(ms) {
      clearInterval(poll);
      poll = setInterval(() => writer.poll(), ms);
    },
    async handOver() {
      if (!owner) return;
      owner = false;
      // The successor applies the consumers, prunes, joins the cluster and serves the metrics
      // port from here on; this process keeps writing its clients' events beside it.
      await cluster?.stop();
      cluster = undefined;
      ctx.cluster = undefined;
      await pruner.stop();
      metricsServer?.stop(true);
      metricsServer = undefined;
      await consumers.release();
      unlock();
    },
    async takeBack() {
      if (owner) return;
      unlock = lockData(config.data);
      // The consumers resume from what the writer has handed on, which must reach past what
      // the other process applied: have the writer read the log up to its end first.
      for (let i = 0; i < 1000; i++) {
        const ahead = writer.othersAhead();
        if (!ahead) break;
        await ahead;
      }
      consumers.resume(writer.heard());
      pruner.start(writer);
      metricsServer = startMetricsServer(ctx);
      joinCluster();
      owner = true;
    },
    stopAccepting() {
      return stopWhenQueueEmpty(port, () => server.stop(false));
    },
    stop() {
      stopping ??= (async () => {
        // First: from now on the writer no longer waits for the derived indexes and they apply
        // nothing new, so what the steps below let through (the EVENTs already read, their
        // verification) is committed to the log and left to the next start, whatever they take.
        // (Last, it let a short burst apply whole while the verify threads closed.)
        runner.closing();
        clearInterval(poll);
        for (const t of timers) clearInterval(t);
        ctx.plugin?.close();
        ctx.api?.stop();
        server.stop(false);
        metricsServer?.stop(true);
        for (const conn of conns) conn.close(1001, "relay shutting down");
        await verifyPool.close();
        await ctx.readers?.close();
        // No more stream messages for the writer; what it commits after this is appended after
        // the next start (it lies above the saved watermark).
        await cluster?.stop();
        await pruner.stop();
        // What the writer still holds is committed without waiting for the consumers; they
        // finish the batch in flight and catch up on the rest at the next start.
        await writer.drain();
        await runner.stop(false);
        // Durable now: a machine that goes down from here on has nothing to rebuild.
        if (owner) syncDerived(store);
        await closeStore(store);
        unlock();
      })();
      return stopping;
    },
  };
}
