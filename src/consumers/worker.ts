// The consumers' thread: applies each generation the runner sends (the serials of its events,
// the seqs of its removal records) to the same consumers the main thread reads, in its own
// handles on the same LMDB environments. Reading the events from the log, parsing and deriving
// (tokenising, counting) happen here, once per event for every consumer (apply.ts). Between batches it
// also walks search postings for the main thread (search/remote.ts).

import { heapStats } from "bun:jsc";
import { join } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { commitCause, fullReason, guardCommitRejections } from "../lmdb/full.ts";
import { Candidates } from "../search/candidates.ts";
import type { SearchIndex } from "../search/consumer.ts";
import type { WalkReply, WalkRequest } from "../search/remote.ts";
import { runWalk, walkReply } from "../search/remote.ts";
import type { StoreOptions } from "../store/store.ts";
import { closeStore, DERIVED_DIR, openStore } from "../store/store.ts";
import { addTime, applyGeneration } from "./apply.ts";
import type { Applied, FromConsumers, GenPayload, Timings, ToConsumers } from "./messages.ts";
import { consumersByName } from "./registry.ts";

guardCommitRejections();
const { path, names, options } = workerData as { path: string; names: string[]; options: StoreOptions };
const store = openStore(path, options);
const consumers = consumersByName(store, names);

/** The search consumer, whose index the main thread's searches may walk here (remote.ts). */
const search = consumers.find((c) => c.name === "search") as SearchIndex | undefined;

/** Runs a search's walk for the main thread and sends back its candidates. */
async function walk(id: number, r: WalkRequest): Promise<void> {
  const c = Candidates.take();
  let reply: WalkReply;
  try {
    if (!search) throw new Error("search is not enabled");
    // The latest snapshot, which holds everything up to the search's watermark.
    store.derived.resetReadTxn();
    reply = walkReply(c, await runWalk(search, r, c));
  } catch (e) {
    reply = {
      n: 0,
      serial: new Float64Array(0),
      time: new Float64Array(0),
      score: new Float64Array(0),
      bound: null,
      error: String(e),
    };
  } finally {
    c.release();
  }
  send({ type: "walked", id, reply }, [
    reply.serial.buffer,
    reply.time.buffer,
    reply.score.buffer,
  ] as ArrayBuffer[]);
}

function send(m: FromConsumers, transfer?: ArrayBuffer[]): void {
  parentPort?.postMessage(m, transfer as never);
}

parentPort?.on("message", async (m: ToConsumers) => {
  switch (m.type) {
    case "walk":
      await walk(m.id, m.req);
      return;
    case "close":
      // Closed here, not by the thread's teardown: lmdb-js shares one environment between the
      // threads of a process, and the main thread closes it right after.
      await closeStore(store);
      send({ type: "closed" });
      return;
    case "apply":
      send({ type: "applied", applied: await apply(m.gen) });
      return;
    default:
      m satisfies never;
  }
});

/** Applies one generation here; a failure (a full disk) goes back for the runner to retry. */
async function apply(g: GenPayload): Promise<Applied> {
  const took: Timings = {};
  let reply: Applied = { n: g.n, took };
  try {
    await applyGeneration(store, consumers, g, took);
  } catch (e) {
    // A full disk: the runner keeps the generation and sends it again.
    const cause = await commitCause(e);
    reply = { n: g.n, error: cause.message, full: fullReason(cause, join(path, DERIVED_DIR)) };
  }
  const t = performance.now();
  collect(g.adds.length);
  addTime(took, "gc", t);
  const h = heapStats();
  reply.heap = { size: h.heapSize, capacity: h.heapCapacity };
  return reply;
}

let sinceCollect = 0;

/**
 * A full collection after a large batch (and now and then after small ones): what a batch
 * allocates (parsed events, tokens, keys) is all garbage once it is applied, and JavaScriptCore
 * otherwise lets this thread's heap grow to several times what it holds (measured on the 50k
 * ingest: 171 MB of heap for 28 MB live; collecting after each batch took the relay's anonymous
 * memory from 485 to 393 MiB at no measurable CPU cost per event).
 */
function collect(events: number): void {
  sinceCollect += events;
  if (sinceCollect < 1000) return;
  sinceCollect = 0;
  Bun.gc(true);
}
