// The consumers' backlog is bounded: a burst of writes longer than the bound is answered in full,
// every event OK'd is served, and no more than the bound (plus one writer batch) ever waits for
// the derived indexes in memory. The consumers here apply only when the bound asks them to (their
// interval and idle flush are off), so without the bound the whole burst would wait.
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { getPublicKey } from "nostr-tools/pure";
import { storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import { OTHERS_CHUNK } from "../src/store/others.ts";
import { openStore } from "../src/store/store.ts";
import { Writer } from "../src/store/writer.ts";
import type { TestRelay } from "./harness.ts";
import { newKey, RawClient, signed, startTestRelay } from "./harness.ts";

const BOUND = 300;
const WRITER_BATCH = 32;
function start(flags: Record<string, string> = {}): TestRelay {
  return startTestRelay({
    "consumers.intervalMs": "1000000",
    "consumers.idleMs": "0",
    "consumers.maxBatch": "1000000",
    "consumers.maxBacklog": String(BOUND),
    "writer.maxBatch": String(WRITER_BATCH),
    ...flags,
  });
}

/** Sends every event at once on one connection; resolves with the OKs, by id. */
async function burst(c: RawClient, events: { id: string }[]): Promise<Map<string, unknown[]>> {
  const from = c.frames.length;
  for (const e of events) c.send(["EVENT", e]);
  const oks = new Map<string, unknown[]>();
  for (let i = 0; i < 3000 && oks.size < events.length; i++) {
    for (const f of c.frames.slice(from)) if (f[0] === "OK") oks.set(f[1] as string, f);
    if (oks.size < events.length) await Bun.sleep(10);
  }
  return oks;
}

test("a burst larger than the backlog's bound is answered in full and served, within the bound", async () => {
  const relay = start();
  const sk = newKey();
  const events = Array.from({ length: 2000 }, (_, i) =>
    signed(sk, { content: `burst ${i}`, created_at: 1_700_000_000 + i }),
  );
  const c = await RawClient.connect(relay.url);
  const oks = await burst(c, events);
  expect(oks.size).toBe(events.length);
  expect([...oks.values()].every((f) => f[2] === true && f[3] === "")).toBe(true);

  const runner = relay.ctx.consumers.runner;
  expect(runner.backlogBound.peakEvents).toBeGreaterThan(0);
  // The writer looks at the backlog before each batch: one batch may pass the bound.
  expect(runner.backlogBound.peakEvents).toBeLessThanOrEqual(BOUND + WRITER_BATCH);
  expect(runner.waitingEvents()).toBeLessThanOrEqual(BOUND + WRITER_BATCH);

  const ids = await c.req("all", { authors: [getPublicKey(sk)], limit: 5000 });
  expect(new Set(ids)).toEqual(new Set(events.map((e) => e.id)));
  expect(ids.length).toBe(events.length);
  c.close();
});

test("readers see every event OK'd while the backlog is at its bound", async () => {
  // A bound of bytes this time: about 30 events of 10 KB.
  const relay = start({ "consumers.maxBacklog": "0", "consumers.maxBacklogMb": "1" });
  const sk = newKey();
  const author = getPublicKey(sk);
  const events = Array.from({ length: 600 }, (_, i) =>
    signed(sk, { content: `${i} `.padEnd(10_000, "x"), created_at: 1_700_000_000 + i }),
  );
  const pub = await RawClient.connect(relay.url);
  const reader = await RawClient.connect(relay.url);
  const from = pub.frames.length;
  for (const e of events) pub.send(["EVENT", e]);
  let checks = 0;
  for (let i = 0; i < 3000; i++) {
    const okd = pub.frames
      .slice(from)
      .filter((f) => f[0] === "OK" && f[2] === true)
      .map((f) => f[1] as string);
    const seen = new Set(await reader.req(`r${i}`, { authors: [author], limit: 1000 }));
    // Stored events are the point: closed, so live 10 KB events do not pile up on every
    // subscription until the relay drops the reader as too slow (limits.maxOutboundBytes).
    reader.send(["CLOSE", `r${i}`]);
    for (const id of okd) expect(seen.has(id)).toBe(true);
    checks++;
    if (okd.length === events.length) break;
    await Bun.sleep(5);
  }
  expect(checks).toBeGreaterThan(1);
  const runner = relay.ctx.consumers.runner;
  expect(runner.backlogBound.peakEvents).toBeGreaterThan(0);
  // 1 MiB of stored JSON at most, plus one writer batch of 10 KB events.
  expect(runner.backlogBound.peakEvents).toBeLessThanOrEqual(Math.ceil(2 ** 20 / 10_000) + WRITER_BATCH);
  pub.close();
  reader.close();
});

test("a flood on one connection is read at the pace of the writer: paused, never refused", async () => {
  const relay = start({ "writer.maxPending": "64" });
  const sk = newKey();
  const events = Array.from({ length: 1500 }, (_, i) => signed(sk, { content: `flood ${i}` }));
  const c = await RawClient.connect(relay.url);
  const oks = await burst(c, events);
  expect(oks.size).toBe(events.length);
  expect([...oks.values()].every((f) => f[2] === true)).toBe(true);
  expect(relay.ctx.pending.pauses).toBeGreaterThan(0);
  expect(relay.ctx.pending.events).toBe(0);
  // Read again once the flood is answered: the connection still works.
  expect((await c.req("n", { ids: [events[0]!.id] })).length).toBe(1);
  c.close();
});

test("what another process commits reaches the consumers in chunks, within the bound", async () => {
  // A burst from beside the relay (as `relay import` makes): a writer of its own on the same
  // directory commits 6,000 events in one transaction, then the relay's writer reads them.
  const relay = start({ "limits.maxLimit": "10000" });
  const other = openStore(relay.dir);
  const pubkey = getPublicKey(newKey());
  const events: NostrEvent[] = Array.from({ length: 6000 }, (_, i) => ({
    id: createHash("sha256").update(`beside ${i}`).digest("hex"),
    pubkey,
    created_at: 1_700_000_000 + i,
    kind: 1,
    tags: [],
    content: `beside ${i}`,
    sig: "00".repeat(64),
  }));
  const outcomes = await new Writer(other, 10_000, () => {}).submitMany(
    events.map((e) => ({ event: e, json: storedJson(e) })),
  );
  expect(outcomes.every((o) => o.status === "stored")).toBe(true);

  const c = await RawClient.connect(relay.url);
  let ids: string[] = [];
  for (let i = 0; i < 500 && ids.length < events.length; i++) {
    relay.ctx.writer.poll();
    await Bun.sleep(20);
    ids = await c.req(`all${i}`, { authors: [pubkey], limit: 10_000 });
  }
  expect(new Set(ids)).toEqual(new Set(events.map((e) => e.id)));
  // Read in one go, all 6,000 would have waited at once.
  const runner = relay.ctx.consumers.runner;
  expect(BOUND + OTHERS_CHUNK + WRITER_BATCH).toBeLessThan(events.length);
  expect(runner.backlogBound.peakEvents).toBeLessThanOrEqual(BOUND + OTHERS_CHUNK + WRITER_BATCH);
  c.close();
});
