// A reader thread: answers the stored part of REQs for the main thread, in its own handles on the
// same LMDB environments and its own read transactions, so a REQ's index walk and body reads
// never wait behind the main thread's frames, commits and live deliveries, nor make them wait.
// It scans each filter's index up to the watermark of the main thread's snapshot and reads the
// bodies it may send, as whole EVENT frames; the main thread adds the events after that
// watermark (its own snapshot's tail) and cuts at the limit (indexes/query.ts answerFromParts).

import { parentPort, workerData } from "node:worker_threads";
import { FramePack, type FramePrefix } from "../indexes/answer.ts";
import type { QueryOptions } from "../indexes/query.ts";
import { indexParts } from "../indexes/query.ts";
import { expiredSerials, openExpiry } from "../store/expiration.ts";
import type { StoreOptions } from "../store/store.ts";
import { closeStore, openStore } from "../store/store.ts";
import { readableJson } from "./access.ts";
import type { FromReader, PartsRequest, ToReader } from "./messages.ts";
import { packParts } from "./messages.ts";

const { path, options } = workerData as { path: string; options: StoreOptions };
const store = openStore(path, options);
const expiry = openExpiry(store);
/** requests whose subscription closed while they were read */
const cancelled = new Set<number>();
/** requests being read: once none is, no cancel can still name one */
let reading = 0;

const reply = (m: FromReader): void => parentPort?.postMessage(m);

async function parts(r: PartsRequest): Promise<void> {
  reading++;
  try {
    const o = optionsFor(r);
    const pack = new FramePack(o.frame!);
    o.pack = pack;
    const found = await indexParts(store, r.filters, o, r.through);
    if (!found) reply({ type: "dropped", id: r.id });
    else {
      reply({ type: "parts", id: r.id, packed: packParts(found, pack) });
    }
  } catch (e) {
    reply({ type: "failed", id: r.id, error: (e as Error).message ?? String(e) });
  } finally {
    cancelled.delete(r.id);
    if (--reading === 0) cancelled.clear();
  }
}

/** The query options of a request, on a snapshot of both environments taken now. */
function optionsFor(r: PartsRequest): QueryOptions {
  // Taken after the main thread took its own: it holds every event up to the REQ's high-water
  // mark and every index entry up to `through`.
  store.env.resetReadTxn();
  store.derived.resetReadTxn();
  const restricted = r.restricted;
  const expired = r.expired ? expiredSerials(expiry, Date.now() / 1000) : undefined;
  const frame: FramePrefix = { text: r.prefix, bytes: Buffer.from(r.prefix) };
  return {
    hwm: r.hwm,
    defaultLimit: r.defaultLimit,
    maxLimit: r.maxLimit,
    yieldEvery: r.yieldEvery,
    cancelled: () => cancelled.has(r.id),
    ...(expired && expired.size > 0 ? { hidden: (serial: number) => expired.has(serial) } : {}),
    ...(restricted
      ? {
          allow: readableJson(restricted.kinds, new Set(restricted.authed)),
          restrictedKind: (kind: number) => restricted.kinds.includes(kind),
          restrictedKinds: restricted.kinds,
        }
      : {}),
    frame,
  };
}

parentPort?.on("message", (m: ToReader) => {
  switch (m.type) {
    case "parts":
      void parts(JSON.parse(m.json) as PartsRequest);
      return;
    case "cancel":
      cancelled.add(m.id);
      return;
    case "stall": {
      const until = performance.now() + m.ms;
      while (performance.now() < until) {
        // busy, as a thread stuck in a read would be
      }
      return;
    }
    case "close":
      // Closed here, not by the thread's teardown: lmdb-js shares one environment between the
      // threads of a process, and the main thread closes it after.
      void closeStore(store).finally(() => reply({ type: "closed" }));
      return;
    default:
      m satisfies never;
  }
});
