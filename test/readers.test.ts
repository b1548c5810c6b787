// REQs answered by reader threads (src/readers/): the stored part of every query shape is the
// model's answer (newest first, limits, replaced and deleted events absent), also while other
// events are written; an event published while REQs race it reaches each subscription exactly
// once, stored or live; a reader thread that hangs or ends fails only the REQs it had, which
// get CLOSED "error: …", and another takes its place.
import { expect, test } from "bun:test";
import { getPublicKey } from "nostr-tools/pure";
import { Rng } from "../bench/load/prng.ts";
import { indexSnapshot } from "../src/indexes/indexes.ts";
import { answerFromParts } from "../src/indexes/query.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import type { Filter } from "../src/nostr/filter.ts";
import { matchFilter } from "../src/nostr/filter.ts";
import { newKey, RawClient, signed, startTestRelay } from "./harness.ts";

const T = 1_700_000_000;
const TAGS = ["nostr", "bitcoin", "art", "music"];

/** A wire filter (`#t` keys) as the matcher's Filter. */
function parsed(w: Record<string, unknown>): Filter {
  const f: Filter = {};
  const tags: [string, string[]][] = [];
  for (const [k, v] of Object.entries(w)) {
    if (k.startsWith("#")) tags.push([k.slice(1), v as string[]]);
    else (f as Record<string, unknown>)[k] = v;
  }
  if (tags.length) f.tags = tags;
  return f;
}

/** What NIP-01 answers from `live`: the matches of any filter, newest first, each cut at its limit. */
function model(live: NostrEvent[], filters: Record<string, unknown>[]): string[] {
  const byNewest = (a: NostrEvent, b: NostrEvent) =>
    b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const out = new Map<string, NostrEvent>();
  for (const w of filters) {
    const f = parsed(w);
    const hits = live.filter((e) => matchFilter(f, e)).sort(byNewest);
    for (const e of hits.slice(0, f.limit ?? 500)) out.set(e.id, e);
  }
  return [...out.values()].sort(byNewest).map((e) => e.id);
}

test("every query shape answered by the reader threads is the model's, also while other events are written", async () => {
  const relay = startTestRelay({ "query.readers": "2", "consumers.intervalMs": "50" });
  const c = await RawClient.connect(relay.url);
  const rng = new Rng(7);
  const keys = Array.from({ length: 6 }, () => newKey());
  const pubs = keys.map((k) => getPublicKey(k));
  const live = new Map<string, NostrEvent>();
  const profiles = new Map<string, NostrEvent>();
  const notes: NostrEvent[] = [];
  for (let i = 0; i < 400; i++) {
    const a = rng.int(0, keys.length - 1);
    const r = rng.float();
    let e: NostrEvent;
    if (r < 0.1) {
      // a profile: the newest per author replaces the others
      e = signed(keys[a]!, { kind: 0, created_at: T + i, content: `{"name":"p${i}"}` });
    } else if (r < 0.2 && notes.length > 0) {
      const target = notes[rng.int(0, notes.length - 1)]!;
      e = signed(keys[a]!, {
        kind: 7,
        created_at: T + i,
        tags: [
          ["e", target.id],
          ["p", target.pubkey],
        ],
        content: "+",
      });
    } else {
      const tags = [["t", TAGS[rng.int(0, TAGS.length - 1)]!]];
      if (rng.float() < 0.3) tags.push(["p", pubs[rng.int(0, pubs.length - 1)]!]);
      // many share a second, so ties at a limit's cut are resolved by id
      e = signed(keys[a]!, { kind: 1, created_at: T + Math.floor(i / 4), tags, content: `note ${i}` });
      notes.push(e);
    }
    expect((await c.publish(e))[2]).toBe(true);
    if (e.kind === 0) {
      const old = profiles.get(e.pubkey);
      if (old) live.delete(old.id);
      profiles.set(e.pubkey, e);
    }
    live.set(e.id, e as NostrEvent);
  }
  // some notes deleted by their authors
  for (const n of notes.filter((_, i) => i % 9 === 0)) {
    const del = signed(keys[pubs.indexOf(n.pubkey)]!, { kind: 5, created_at: T + 500, tags: [["e", n.id]] });
    expect((await c.publish(del))[2]).toBe(true);
    live.delete(n.id);
    live.set(del.id, del as NostrEvent);
  }
  const some = [...live.values()];
  const shapes: Record<string, unknown>[][] = [
    [{ authors: [pubs[0]], limit: 20 }],
    [{ kinds: [1], limit: 37 }],
    [{ kinds: [0] }],
    [{ "#t": ["art"], limit: 15 }],
    [{ "#p": [pubs[2]], kinds: [1, 7], limit: 50 }],
    [{ "#e": [notes[3]!.id, notes[10]!.id] }],
    [{ authors: pubs.slice(0, 3), kinds: [1, 7], limit: 40 }],
    [{ since: T + 20, until: T + 60, kinds: [1], limit: 30 }],
    [{ ids: some.slice(0, 25).map((e) => e.id) }],
    [{ kinds: [5], limit: 10 }],
    [
      { authors: [pubs[1]], limit: 5 },
      { "#t": ["music"], limit: 7 },
      { kinds: [0], limit: 2 },
    ],
    [{ limit: 3 }],
  ];
  const check = async (tag: string) => {
    for (const [i, filters] of shapes.entries()) {
      const got = await c.req(`${tag}${i}`, ...filters);
      expect({ shape: i, ids: got }).toEqual({ shape: i, ids: model([...live.values()], filters) });
    }
  };
  await check("quiet");
  expect(relay.ctx.readers?.threads).toBe(2);

  // Again while a stream of other events is written (another author, tags and kind none of the
  // shapes above can match), with the consumers applying as it goes.
  const other = newKey();
  const w = await RawClient.connect(relay.url);
  let writing = true;
  const writer = (async () => {
    for (let i = 0; writing; i++)
      await w.publish(signed(other, { kind: 1111, created_at: T - 1000 - i, tags: [["t", "elsewhere"]] }));
  })();
  for (let round = 0; round < 3; round++) await check(`busy${round}-`);
  writing = false;
  await writer;
  c.close();
  w.close();
}, 60_000);

test("an event published while REQs race it reaches each subscription exactly once, stored or live", async () => {
  const relay = startTestRelay({ "query.readers": "2" });
  const sk = newKey();
  const author = getPublicKey(sk);
  const pub = await RawClient.connect(relay.url);
  const sub = await RawClient.connect(relay.url);
  const events = Array.from({ length: 120 }, (_, i) =>
    signed(sk, { created_at: T + i, content: `race ${i}` }),
  );
  // A REQ every few publishes, each left open; all of them see every event once.
  const subs: string[] = [];
  for (const [i, e] of events.entries()) {
    if (i % 6 === 0) {
      const id = `s${i}`;
      subs.push(id);
      sub.send(["REQ", id, { authors: [author] }]);
    }
    pub.send(["EVENT", e]);
    if (i % 3 === 0) await Bun.sleep(1);
  }
  for (const e of events) await pub.ok(e.id);
  for (const id of subs) await sub.next((f) => f[0] === "EOSE" && f[1] === id, 10_000);
  // the live ones that follow the last OK
  await Bun.sleep(200);
  for (const id of subs) {
    const got = sub.frames
      .filter((f) => f[0] === "EVENT" && f[1] === id)
      .map((f) => (f[2] as { id: string }).id);
    expect({
      id,
      dup: got.length - new Set(got).size,
      missing: events.filter((e) => !got.includes(e.id)).length,
    }).toEqual({
      id,
      dup: 0,
      missing: 0,
    });
  }
  pub.close();
  sub.close();
}, 30_000);

test("a reader thread that hangs or ends fails only the REQs it had, and another takes its place", async () => {
  const relay = startTestRelay({ "query.readers": "1", "query.readerTimeoutMs": "300" });
  const pool = relay.ctx.readers!;
  const sk = newKey();
  const c = await RawClient.connect(relay.url);
  const stored = [];
  for (let i = 0; i < 5; i++) {
    const e = signed(sk, { created_at: T + i });
    expect((await c.publish(e))[2]).toBe(true);
    stored.push(e.id);
  }
  const author = getPublicKey(sk);
  const answered = async (subId: string) => (await c.req(subId, { authors: [author] })).sort();

  // Hung: the thread is busy and does not answer; past the timeout it is ended and replaced.
  pool.workers[0]!.postMessage({ type: "stall", ms: 20_000 });
  const started = performance.now();
  c.send(["REQ", "hung", { authors: [author] }]);
  const closed = await c.next((f) => f[1] === "hung" && (f[0] === "CLOSED" || f[0] === "EOSE"), 10_000);
  expect(closed[0]).toBe("CLOSED");
  expect(String(closed[2])).toStartWith("error: ");
  expect(performance.now() - started).toBeLessThan(5_000);
  expect(pool.replaced).toBe(1);
  expect(await answered("after-hung")).toEqual([...stored].sort());

  // Ended: the REQ it had in hand is refused the same way.
  pool.workers[0]!.postMessage({ type: "stall", ms: 2_000 });
  c.send(["REQ", "ended", { authors: [author] }]);
  await Bun.sleep(50);
  await pool.workers[0]!.terminate();
  const ended = await c.next((f) => f[1] === "ended" && (f[0] === "CLOSED" || f[0] === "EOSE"), 10_000);
  expect(ended[0]).toBe("CLOSED");
  expect(pool.replaced).toBe(2);
  expect(await answered("after-ended")).toEqual([...stored].sort());
  c.close();
}, 30_000);

test("a reader thread answers from the main thread's snapshot: nothing past its watermark twice, nothing past the REQ's mark", async () => {
  // The consumers apply only when told to, so a batch can be applied between the two snapshots.
  const relay = startTestRelay({
    "query.readers": "1",
    "consumers.intervalMs": "1000000",
    "consumers.idleMs": "0",
  });
  const { store, readers, consumers, writer } = relay.ctx;
  const sk = newKey();
  const author = getPublicKey(sk);
  const c = await RawClient.connect(relay.url);
  const first = Array.from({ length: 10 }, (_, i) => signed(sk, { created_at: T + i }));
  for (const e of first) expect((await c.publish(e))[2]).toBe(true);
  // The main thread's snapshot: the ten are in its tail, not yet in the indexes.
  const snap = indexSnapshot(store);
  const hwm = writer.visibleSerial;
  // Applied after it, before the reader thread reads: they are in the indexes now too.
  await consumers.runner.flush();
  // And one more committed after the REQ's mark.
  const late = signed(sk, { created_at: T + 100 });
  expect((await c.publish(late))[2]).toBe(true);
  const prefix = '["EVENT","x",';
  const limits = { defaultLimit: 500, maxLimit: 5000, yieldEvery: 512 };
  const o = { hwm, ...limits, frame: { text: prefix, bytes: Buffer.from(prefix) } };
  const answer = async (filters: Filter[]) => {
    const req = { filters, hwm, through: snap.through, ...limits, prefix, expired: false };
    const parts = await readers!.parts(req, () => false);
    return answerFromParts(store, filters, parts!, o, snap).map((f) => (JSON.parse(f)[2] as NostrEvent).id);
  };
  // Each once: the index part stops at the snapshot's watermark, the tail has the rest.
  expect(await answer([{ authors: [author] }])).toEqual(first.map((e) => e.id).reverse());
  // Looked up by id, the event committed after the REQ's mark is not in its stored answer.
  expect(await answer([{ ids: [late.id, first[0]!.id] }])).toEqual([first[0]!.id]);
  c.close();
});
