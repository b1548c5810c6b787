// Which consumers of the log a store has, registered in one place for the relay, the data
// commands and the consumers' own thread (worker.ts builds its copies by name here): the REQ
// indexes, NIP-50 search, the API's engagement counters and the NIP-45 registers, behind one
// runner, and readers' views of each. The writer's NIP-40 expiry index is registered with them
// (every process that writes keeps it, in the log's environment). An optional consumer that is
// turned off is marked stale, so turning it on again rebuilds it.
import type { Config } from "../config/schema.ts";
import { HllRegisters, REGISTERS_CONSUMER } from "../count/registers.ts";
import { EngagementCounters } from "../engagement/counters.ts";
import { Indexes } from "../indexes/indexes.ts";
import type { Searcher } from "../indexes/query.ts";
import { SearchIndex } from "../search/consumer.ts";
import { searcher } from "../search/engine.ts";
import type { WalkOffload } from "../search/remote.ts";
import type { Consumer, Tail } from "../store/consumer.ts";
import { markStale, readWatermark } from "../store/consumer.ts";
import { Expiration } from "../store/expiration.ts";
import type { HighWater } from "../store/serials.ts";
import type { Store } from "../store/types.ts";
import { InThreadApplier, ThreadApplier } from "./apply.ts";
import { logTail } from "./log-tail.ts";
import { ConsumerRunner } from "./runner.ts";

export interface Consumers {
  expiration: Expiration;
  /** the REQ indexes (pubkey, kind, pubkind, tag, time) */
  indexes: Indexes;
  runner: ConsumerRunner;
  search: SearchIndex | undefined;
  counters: EngagementCounters | undefined;
  /** NIP-45 counts and registers of the shapes NIP-45 names, unless `count.registers` is off */
  registers: HllRegisters | undefined;
  /** answers `search` filters, when search is enabled */
  searcher: Searcher | undefined;
  /**
   * Stops applying the consumers here, for a process taking the directory over: what waits is
   * applied, then readers see past the watermarks from the log on disk (log-tail.ts).
   */
  release(): Promise<void>;
  /**
   * Applies them here again (the process that was to take over is gone), from the watermarks
   * to `until`: the log's marks the writer has handed on, which must cover the watermarks.
   */
  resume(until: HighWater): void;
}

export interface ConsumersOptions {
  log?: (line: string) => void;
  /** where the consumers' failures go (default: `log`) */
  logError?: (line: string) => void;
  /** progress of a consumer catching up (a rebuild can take a while) */
  progress?: (name: string, events: number, total: number) => void;
  /** events per write transaction while catching up */
  batch?: number;
  /** apply batches on a thread of their own (the relay); default: in this thread */
  thread?: boolean;
  /**
   * false: a running relay owns the directory and applies the consumers (a data command
   * writing beside it); only the writer's own indexes and the removal log are kept here
   */
  consumers?: boolean;
}

/**
 * What a data command keeps while the relay owns the directory: no consumers (the relay applies
 * what this process commits, once it notices), but the removal log they read is written.
 */
function beside(store: Store, expiration: Expiration): Consumers {
  const runner = new ConsumerRunner(store, [], { intervalMs: 0, batch: Number.MAX_SAFE_INTEGER });
  store.logRemovals = true;
  return {
    expiration,
    indexes: new Indexes(store),
    runner,
    search: undefined,
    counters: undefined,
    registers: undefined,
    searcher: undefined,
    release: async () => {},
    resume: () => {},
  };
}

/** A store's consumers by name, in the order given (for the consumers' own thread). */
export function consumersByName(store: Store, names: readonly string[]): Consumer[] {
  return names.map((name) => {
    if (name === "indexes") return new Indexes(store);
    if (name === "search") return new SearchIndex(store);
    if (name === "counters") return new EngagementCounters(store);
    if (name === REGISTERS_CONSUMER) return new HllRegisters(store);
    throw new Error(`unknown consumer ${name}`);
  });
}

/**
 * The consumers `config` turns on whose entries on disk are missing or of another version:
 * a relay starting on the store would rebuild them from the whole log before serving.
 */
export function consumersToRebuild(store: Store, config: Config): string[] {
  const names = ["indexes"];
  if (config["search.enabled"]) names.push("search");
  if (config["api.enabled"]) names.push("counters");
  if (config["count.registers"]) names.push(REGISTERS_CONSUMER);
  return consumersByName(store, names)
    .filter((c) => readWatermark(store, c.name)?.version !== c.version)
    .map((c) => c.name);
}

/**
 * Registers what the store derives and brings it up to date with the log on disk (rebuilding
 * what is missing or of another version). Call before the writer starts.
 */
export function openConsumers(store: Store, config: Config, o: ConsumersOptions = {}): Consumers {
  const log = o.log ?? console.log;
  const expiration = new Expiration(store);
  store.indexers.push(expiration);
  if (o.consumers === false) return beside(store, expiration);
  const search = config["search.enabled"] ? new SearchIndex(store) : undefined;
  const counters = config["api.enabled"] ? new EngagementCounters(store) : undefined;
  const registers = config["count.registers"] ? new HllRegisters(store) : undefined;
  if (!search) markStale(store, "search");
  if (!counters) markStale(store, "counters");
  if (!registers) markStale(store, REGISTERS_CONSUMER);
  const indexes = new Indexes(store);
  const consumers = [indexes, search, counters, registers].filter((c) => c !== undefined) as Consumer[];
  // The store's own directory: a caller's config may name another (the tests' configs name
  // none, and the thread then opened ./data).
  const newThread = () =>
    new ThreadApplier(
      store.path,
      consumers.map((c) => c.name),
      { mapSizeGb: config["store.mapSizeGb"], writeMap: store.room !== undefined },
    );
  let thread = o.thread ? newThread() : undefined;
  const runner = new ConsumerRunner(store, consumers, {
    intervalMs: config["consumers.intervalMs"],
    idleMs: config["consumers.idleMs"],
    batch: config["consumers.maxBatch"],
    maxEvents: config["consumers.maxBacklog"],
    maxBytes: backlogBytes(config),
    log,
    logError: o.logError,
    applier: thread,
  });
  const tails = (of: <V>(c: Consumer<unknown, V>) => Tail<V>) => {
    indexes.tail = of(indexes);
    if (search) search.tail = of(search);
    if (counters) counters.tail = of(counters);
    if (registers) registers.tail = of(registers);
  };
  tails((c) => runner.tail(c));
  runner.catchUp(o.progress, o.batch);
  // Search walks are shared with the consumers' thread between its batches (search/remote.ts),
  // whichever thread applies now.
  const walks: WalkOffload = {
    ready: () => thread?.ready() ?? false,
    inFlight: () => thread?.inFlight() ?? 0,
    walk: (req) => thread!.walk(req),
  };
  return {
    expiration,
    indexes,
    runner,
    search,
    counters,
    registers,
    searcher: search ? searcher(search, thread ? walks : undefined) : undefined,
    release: () =>
      runner.release(() => {
        thread = undefined;
        tails((c) => logTail(store, c));
      }),
    resume: (until) => {
      if (!runner.released) return;
      if (o.thread) thread = newThread();
      tails((c) => runner.tail(c));
      runner.resume(thread ?? new InThreadApplier(store, consumers), until);
    },
  };
}

/**
 * The bytes that may wait for the consumers: consumers.maxBacklogMb, and under a disk budget at
 * most a sixteenth of it (at least 1 MiB). What waits is in the log already and comes to the
 * derived indexes later, in batches of half of it: on a small budget, 32 MiB of 4 KB notes
 * arriving at once in derived/ doubled the files past what the budget allows (bench/flood.ts).
 */
export function backlogBytes(config: Config): number {
  const set = config["consumers.maxBacklogMb"] * 2 ** 20;
  const budget = config["store.maxDiskGb"] * 2 ** 30;
  if (budget <= 0) return set;
  const cap = Math.max(2 ** 20, Math.floor(budget / 16));
  return set > 0 ? Math.min(set, cap) : cap;
}
