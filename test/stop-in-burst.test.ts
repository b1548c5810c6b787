// A stop in the middle of a burst, with the consumers' backlog at its bound: SIGTERM commits what
// the writer holds without waiting for the derived indexes, finishes the batch they are applying,
// and exits; the rest is in the log, and the next start catches every index up from its own
// watermark. Every event answered OK true is served after the restart, by REQ, COUNT and search.
import { expect, test } from "bun:test";
import { getPublicKey } from "nostr-tools/pure";
import type { NostrEvent } from "../src/nostr/event.ts";
import { readWatermark } from "../src/store/consumer.ts";
import { currentHighWater } from "../src/store/serials.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import { newKey, RawClient, signed, tempDir } from "./harness.ts";
import { listen, metric, stop, until } from "./procs.ts";

const EVENTS = 3000;

/** The consumers apply only when the bound asks them to, so the backlog is never empty mid-burst. */
const serve = (dir: string) =>
  listen([
    "serve",
    "--port",
    "0",
    "--data",
    dir,
    "--consumers.intervalMs",
    "1000000",
    "--consumers.idleMs",
    "0",
    "--consumers.maxBatch",
    "1000000",
    "--consumers.maxBacklog",
    "300",
    "--writer.maxBatch",
    "32",
  ]);

/**
 * Publishes the whole burst at once and sends SIGTERM once a quarter of it is answered. Returns
 * the data directory and what the client saw: the OKs before the signal and after the exit.
 */
async function burstThenStop(
  events: NostrEvent[],
): Promise<{ dir: string; before: number; okd: Set<string>; took: number }> {
  const dir = tempDir("stop-in-burst-");
  const relay = await serve(dir);
  const c = await RawClient.connect(relay.url);
  for (const e of events) c.send(["EVENT", e]);
  const oks = () => c.frames.filter((f) => f[0] === "OK").length;
  await until("a quarter of the burst answered", () => oks() >= EVENTS / 4);
  const before = oks();
  const asked = performance.now();
  await stop(relay);
  const took = performance.now() - asked;
  const okd = new Set(c.frames.filter((f) => f[0] === "OK" && f[2] === true).map((f) => f[1] as string));
  return { dir, before, okd, took };
}

test("SIGTERM mid-burst exits at once, leaves the backlog to the next start, and loses nothing OK'd", async () => {
  const sk = newKey();
  const pubkey = getPublicKey(sk);
  const events = Array.from({ length: EVENTS }, (_, i) =>
    signed(sk, { content: `burst word${i % 7} ${i}`, created_at: 1_700_000_000 + i }),
  );
  // The signal must land mid-burst. OKs wait for their batch's sync, in order, so one slow sync
  // holds every OK behind it while commits go on: a client can see a few hundred answers, then
  // the whole burst at once (seen: 535 for 300 ms, then 3,000), and a signal sent then finds the
  // burst over and applied. Such a run says nothing about a stop mid-burst: it is run again.
  let run = await burstThenStop(events);
  for (let tries = 1; run.before === EVENTS && tries < 5; tries++) run = await burstThenStop(events);
  const { dir, okd, took } = run;
  expect(run.before).toBeLessThan(EVENTS);
  expect(okd.size).toBeGreaterThanOrEqual(EVENTS / 4);
  expect(took).toBeLessThan(10_000);

  // What the writer committed after the consumers' last batch is left to the next start: the
  // indexes' watermark is behind the log (a stop that applied the backlog first would not be).
  const s = openStore(dir);
  const high = currentHighWater(s).serial;
  const left = high - (readWatermark(s, "indexes")?.serial ?? 0);
  await closeStore(s);
  expect(left).toBeGreaterThan(0);

  const again = await serve(dir);
  try {
    const r = await RawClient.connect(again.url);
    const ids = new Set(await r.req("all", { authors: [pubkey], limit: 5000 }));
    expect([...okd].filter((id) => !ids.has(id))).toEqual([]);
    r.send(["COUNT", "n", { authors: [pubkey] }]);
    const count = await r.next((f) => f[0] === "COUNT");
    expect((count[2] as { count: number }).count).toBe(ids.size);
    const found = new Set(await r.req("s", { search: "word3", authors: [pubkey], limit: 5000 }));
    const want = events.filter((e) => ids.has(e.id) && e.content.startsWith("burst word3 ")).map((e) => e.id);
    expect(found).toEqual(new Set(want));
    // every index has caught up from its own watermark to the log's end
    for (const name of ["indexes", "search", "counters", "hll"])
      expect(await metric(again.url, `relay_consumer_watermark{consumer="${name}"}`)).toBe(high);
    r.close();
  } finally {
    await stop(again);
  }
}, 60_000);
