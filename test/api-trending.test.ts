// The trending window against a real store and writer with a hand-moved clock: notes age out of
// the window without a restart, notes older than the window are never tracked, equal scores
// rank newer first then lower id, and seeding from the kind index finds the same notes.
import { afterAll, expect, test } from "bun:test";
import { getEventHash, getPublicKey } from "nostr-tools/pure";
import { TrendingWindow } from "../src/api/trending.ts";
import { loadConfig } from "../src/config/load.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import { storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import { Writer } from "../src/store/writer.ts";
import { newKey, now, signed, tempDir } from "./harness.ts";

const dir = tempDir("api-trending-");
const store = openStore(dir);
afterAll(() => closeStore(store));

test("notes leave the window as the clock moves; ties rank newer first, then lower id", async () => {
  const T = now();
  let clock = T;
  const consumers = openConsumers(store, loadConfig(), { log: () => {} });
  const counters = consumers.counters!;
  const window = new TrendingWindow(100, counters, () => clock);
  window.seed(store);
  const writer = new Writer(store, 100, (stored, removed) => {
    consumers.runner.committed(stored, removed);
    window.committed(stored, removed);
  });
  const write = async (e: NostrEvent) =>
    expect(await writer.submit(e, storedJson(e))).toMatchObject({ status: "stored" });

  const author = newKey();
  const early = signed(author, { created_at: T - 50, content: "early" });
  const [x, y] = [
    signed(author, { created_at: T - 10, content: "x" }),
    signed(author, { created_at: T - 10, content: "y" }),
  ];
  const tooOld = signed(author, { created_at: T - 101, content: "before the window" });
  for (const e of [early, x, y, tooOld]) await write(e);
  for (const e of [early, x, y, tooOld])
    await write(
      signed(newKey(), {
        kind: 7,
        content: "+",
        tags: [
          ["e", e.id],
          ["p", getPublicKey(author)],
        ],
      }),
    );

  const ids = () => window.top(10, () => true).map((n) => n.id);
  const [first, second] = [x.id, y.id].sort() as [string, string];
  expect(window.size).toBe(3);
  expect(ids()).toEqual([first, second, early.id]);
  expect(window.top(10, () => true).map((n) => n.score)).toEqual([1, 1, 1]);

  clock = T + 51; // `early` (T - 50) is now older than the window
  expect(ids()).toEqual([first, second]);
  clock = T + 61; // a minute on, the next look prunes it from memory as well
  expect(ids()).toEqual([first, second]);
  expect(window.size).toBe(2);

  const reseeded = new TrendingWindow(100, counters, () => clock);
  expect(reseeded.seed(store)).toBe(2);
  expect(reseeded.top(10, () => true).map((n) => n.id)).toEqual([first, second]);
  await writer.drain();
  await consumers.runner.stop();
});

test("notes of a batch the consumers applied before any reader looked are still in the window", async () => {
  const d = tempDir("api-trending-unread-");
  const s = openStore(d);
  try {
    const consumers = openConsumers(s, loadConfig(), { log: () => {} });
    const counters = consumers.counters!;
    const window = new TrendingWindow(1000, counters);
    window.seed(s);
    const writer = new Writer(s, 100, (stored, removed) => {
      consumers.runner.committed(stored, removed);
      window.committed(stored, removed);
    });
    const note = signed(newKey(), { content: "applied unseen" });
    const like = signed(newKey(), { kind: 7, content: "+", tags: [["e", note.id]] });
    for (const e of [note, like])
      expect(await writer.submit(e, storedJson(e))).toMatchObject({ status: "stored" });
    // Applied and on disk before anything read a view of the batch.
    await consumers.runner.settle();
    expect(window.top(10, () => true).map((n) => n.id)).toEqual([note.id]);
    await writer.drain();
  } finally {
    await closeStore(s);
  }
});

test("a batch of 30,000 notes reaches the window in one pass, not one nested call per note", async () => {
  const d = tempDir("api-trending-burst-");
  const s = openStore(d);
  try {
    const consumers = openConsumers(s, loadConfig(), { log: () => {} });
    const counters = consumers.counters!;
    const window = new TrendingWindow(100_000, counters);
    window.seed(s);
    const writer = new Writer(s, 5000, (stored, removed) => {
      consumers.runner.committed(stored, removed);
      window.committed(stored, removed);
    });
    const T = now();
    const notes = Array.from({ length: 30_000 }, (_, i): NostrEvent => {
      const e = { pubkey: "ab".repeat(32), created_at: T - (i % 1000), kind: 1, tags: [], content: `n${i}` };
      return { ...e, id: getEventHash(e), sig: "cd".repeat(64) };
    });
    const outcomes = await writer.submitMany(notes.map((e) => ({ event: e, json: storedJson(e) })));
    expect(outcomes.every((o) => o.status === "stored")).toBe(true);
    await consumers.runner.settle();
    expect(window.size).toBe(notes.length);
    await writer.drain();
  } finally {
    await closeStore(s);
  }
}, 60_000);
