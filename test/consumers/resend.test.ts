// A generation can reach the consumers again after it is on disk: the runner sends a generation
// again when it heard of no success (a failure, or a thread that died after its commit), and
// applies it in its own thread from then on. Each consumer must apply a generation once:
// counters applied twice would count twice. A thread can also end without an error (ended from
// outside, or it left by itself): from then on nothing may wait for it, since a batch sent
// there would hold the writer once the backlog is full and a search walk would hold its REQ.
//
// Threads are ended here between their batches: Bun's `terminate()` of a worker in the middle
// of an LMDB write transaction does not always end it (seen: the thread neither exits nor
// answers), so ending one while it works would not test this deterministically.
import { expect, test } from "bun:test";
import { loadConfig } from "../../src/config/load.ts";
import { applyGeneration, ThreadApplier } from "../../src/consumers/apply.ts";
import type { GenPayload } from "../../src/consumers/messages.ts";
import type { Consumers } from "../../src/consumers/registry.ts";
import { openConsumers } from "../../src/consumers/registry.ts";
import type { EngagementCounters } from "../../src/engagement/counters.ts";
import { runQuery } from "../../src/indexes/query.ts";
import { storedJson } from "../../src/nostr/canonical.ts";
import type { NostrEvent } from "../../src/nostr/event.ts";
import { readWatermark } from "../../src/store/consumer.ts";
import { closeStore, openStore } from "../../src/store/store.ts";
import type { Store } from "../../src/store/types.ts";
import { Writer } from "../../src/store/writer.ts";
import { cleanup, newKey, now, RawClient, signed, startTestRelay, tempDir } from "../harness.ts";
import { until } from "../procs.ts";

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

/** The consumers' own thread over the stored events' directory, closed with the store. */
function threadFor(dir: string, s: Store, d: Consumers): ThreadApplier {
  const thread = new ThreadApplier(
    dir,
    d.runner.consumers.map((c) => c.name),
  );
  cleanup(async () => {
    await thread.close();
    await closeStore(s);
  });
  return thread;
}

/** The worker under an applier or a runner's applier, to end it as if from outside. */
type Ends = { worker: { terminate(): Promise<number> }; broken?: boolean };

/** How `p` settles within 3 s. */
const settled = (p: Promise<unknown>) =>
  Promise.race([
    p.then(
      () => "resolved",
      (err: Error) => `rejected: ${err.message}`,
    ),
    Bun.sleep(3000).then(() => "still waiting"),
  ]);

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
  const thread = threadFor(dir, s, d);
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

test("after the consumers' thread ends, a batch or a walk sent to it fails at once", async () => {
  const { dir, s, d, payload } = await stored("ended");
  const thread = threadFor(dir, s, d);
  expect(await settled(thread.apply(payload(1)))).toBe("resolved");
  await (thread as unknown as Ends).worker.terminate();
  await until("the thread's end to be seen", () => thread.broken, 5000);
  expect(thread.broken).toBe(true);
  expect(thread.ready()).toBe(false);
  expect(await settled(thread.apply(payload(2, [])))).toStartWith("rejected: consumers' thread");
  expect(await settled(thread.walk({} as never))).toStartWith("rejected: consumers' thread");
});

test("a relay whose consumers' thread ends goes on: every event it OK'd is found by REQ and by search", async () => {
  const relay = startTestRelay();
  const { runner, search } = relay.ctx.consumers;
  search!.offloadFrom = 0; // every search walk may go to the consumers' thread
  const c = await RawClient.connect(relay.url);
  cleanup(() => c.close());
  const sk = newKey();
  const ids: string[] = [];
  const publish = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const e = signed(sk, { created_at: now() - ids.length, content: `thread exit words ${ids.length}` });
      expect(await c.publish(e)).toEqual(["OK", e.id, true, ""]);
      ids.push(e.id);
    }
  };
  await publish(3);
  await runner.settle();
  expect((await c.req("s0", { search: "thread exit words" })).sort()).toEqual([...ids].sort());
  const thread = (runner as unknown as { applier: Ends }).applier;
  await thread.worker.terminate();
  await until("the thread's end to be seen", () => thread.broken === true, 5000);
  // A search once it is gone, events stored after it, then applied in the relay's own thread.
  expect((await c.req("s1", { search: "thread exit words" })).sort()).toEqual([...ids].sort());
  await publish(3);
  await runner.settle();
  expect(runner.waitingEvents()).toBe(0);
  expect((await c.req("q", { kinds: [1] })).sort()).toEqual([...ids].sort());
  expect((await c.req("s2", { search: "thread exit words" })).sort()).toEqual([...ids].sort());
});
