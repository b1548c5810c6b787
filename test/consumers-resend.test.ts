// A generation can reach the consumers again after it is on disk: the runner sends a generation
// again when it heard of no success (a failure, or a thread that died after its commit), and
// applies it in its own thread from then on. Each consumer must apply a generation once:
// counters applied twice would count twice.
import { expect, test } from "bun:test";
import { loadConfig } from "../src/config/load.ts";
import type { GenPayload } from "../src/consumers/apply.ts";
import { applyGeneration, ThreadApplier } from "../src/consumers/apply.ts";
import type { Consumers } from "../src/consumers/registry.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import type { EngagementCounters } from "../src/engagement/counters.ts";
import { runQuery } from "../src/indexes/query.ts";
import { storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import { readWatermark } from "../src/store/consumer.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import type { Store } from "../src/store/types.ts";
import { Writer } from "../src/store/writer.ts";
import { cleanup, newKey, now, signed, tempDir } from "./harness.ts";

/** A note and three likes of it, stored; the consumers have applied none of them. */
async function stored(label: string) {
  const dir = tempDir(`consumers-resend-${label}-`);
  const s = openStore(dir);
  const d = openConsumers(s, loadConfig({ flags: { data: dir } }), { log: () => {} });
  // The writer's commits are not handed to the runner: the test sends the generation itself.
  const writer = new Writer(s, 100, () => {});
  const note = signed(newKey(), { created_at: now(), content: "resend words" });
  const likes = [0, 1, 2].map(() =>
    signed(newKey(), { kind: 7, created_at: now(), content: "+", tags: [["e", note.id]] }),
  );
  const events = [note, ...likes];
  const outcomes = await writer.submitMany(events.map((e) => ({ event: e, json: storedJson(e) })));
  const serials = outcomes.map((o) => (o.status === "stored" ? o.serial : 0));
  expect(serials.every((x) => x > 0)).toBe(true);
  const payload = (n = 1, adds = serials): GenPayload => ({
    n,
    maxSerial: Math.max(...serials),
    maxSeq: s.lastRemoval,
    adds: Float64Array.from(adds),
    removes: new Float64Array(0),
    bytes: 0,
  });
  const counters = d.runner.consumers.find((c) => c.name === "counters") as EngagementCounters;
  return { dir, s, d, note, events, serials, payload, counters };
}

/** What the consumers' entries on disk give, views aside. */
async function onDisk(s: Store, d: Consumers, counters: EngagementCounters, note: NostrEvent) {
  s.derived.resetReadTxn();
  const found = await runQuery(s, [{ search: "resend words" }], {
    hwm: s.lastSerial,
    defaultLimit: 10,
    maxLimit: 10,
    yieldEvery: 64,
    search: d.searcher,
  });
  return {
    likes: counters.note(note.id).likes,
    reactions: await runQuery(s, [{ kinds: [7], tags: [["e", [note.id]]] }], {
      hwm: s.lastSerial,
      defaultLimit: 10,
      maxLimit: 10,
      yieldEvery: 64,
    }),
    found: found?.length,
    gens: ["indexes", "search", "counters"].map((name) => readWatermark(s, name)?.gen),
  };
}

test("a generation applied twice in this thread counts once", async () => {
  const { s, d, note, payload, counters } = await stored("here");
  cleanup(() => closeStore(s));
  const cs = d.runner.consumers;
  await applyGeneration(s, cs, payload());
  await applyGeneration(s, cs, payload());
  const got = await onDisk(s, d, counters, note);
  expect(got.likes).toBe(3);
  expect(got.reactions!.length).toBe(3);
  expect(got.found).toBe(1);
  expect(got.gens).toEqual([1, 1, 1]);
});

test("a generation sent again to the consumers' thread counts once", async () => {
  const { dir, s, d, note, payload, counters } = await stored("thread");
  const thread = new ThreadApplier(
    dir,
    d.runner.consumers.map((c) => c.name),
  );
  cleanup(async () => {
    await thread.close();
    await closeStore(s);
  });
  // The generation, then the same one sent again; then a later one and the first once more.
  await thread.apply(payload(1));
  await thread.apply(payload(1));
  await thread.apply(payload(2, []));
  await thread.apply(payload(1));
  const got = await onDisk(s, d, counters, note);
  expect(got.likes).toBe(3);
  expect(got.reactions!.length).toBe(3);
  expect(got.found).toBe(1);
  expect(got.gens).toEqual([2, 2, 2]);
});
