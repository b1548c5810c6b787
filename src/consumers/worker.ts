// The consumers' thread: applies each generation the runner sends (serials and stored JSON) to
// the same consumers the main thread reads, in its own handle on the same LMDB environment.
// Parsing and deriving (tokenising, counting) happen here, once per event for every consumer.
import { parentPort, workerData } from "node:worker_threads";
import { consumersByName } from "../derived.ts";
import type { NostrEvent } from "../nostr/event.ts";
import { openStore } from "../store/store.ts";
import type { Applied, GenPayload } from "./apply.ts";
import { applyShares, shares } from "./apply.ts";

const { path, names } = workerData as { path: string; names: string[] };
const store = openStore(path);
const consumers = consumersByName(store, names);

const parse = (list: [number, string][]): [number, NostrEvent][] =>
  list.map(([serial, json]) => [serial, JSON.parse(json) as NostrEvent]);

parentPort?.on("message", async (g: GenPayload) => {
  let reply: Applied = { n: g.n };
  try {
    const adds = parse(g.adds);
    const removes = parse(g.removes);
    const ready = shares(consumers, (i) => {
      const c = consumers[i]!;
      return {
        adds: adds.map(([serial, e]) => ({ serial, p: c.prepare(e) })),
        removes: removes.map(([serial, e]) => ({ serial, p: c.prepare(e) })),
      };
    });
    await applyShares(store, consumers, g, ready, true);
  } catch (e) {
    reply = { n: g.n, error: (e as Error).message };
  }
  parentPort?.postMessage(reply);
});
