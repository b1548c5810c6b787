import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unsignedNote } from "../../test/fixtures/stored-events.ts";
import { storedJson } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Committed } from "./batch.ts";
import { serialKey } from "./keys.ts";
import { removeBySerial } from "./lifecycle.ts";
import { readHighWater, writeTxn } from "./serials.ts";
import { closeStore, openStore } from "./store.ts";
import { Writer } from "./writer.ts";

const dir = mkdtempSync(join(tmpdir(), "writer-"));
const store = openStore(dir);
afterAll(async () => {
  await closeStore(store);
  rmSync(dir, { recursive: true, force: true });
});

const ev = (n: number): [NostrEvent, string] => unsignedNote(n);

test("work submitted while the previous batch is being flushed is committed too", async () => {
  const w = new Writer(store, 2048, () => {});
  await Promise.all([w.submit(...ev(1))]);
  // Submitted right as the first loop winds down: it must start (or join) a loop, never wait forever.
  const outcome = await Promise.race([w.submit(...ev(2)), Bun.sleep(2000).then(() => "stranded")]);
  expect(outcome).toMatchObject({ status: "stored" });
  const task = await Promise.race([w.task(() => 42), Bun.sleep(2000).then(() => "stranded")]);
  expect(task).toBe(42);
  await w.drain();
});

test("the newest event's serial is never handed out again once it is deleted, even after reopening", async () => {
  const d = mkdtempSync(join(tmpdir(), "writer-serials-"));
  try {
    let s = openStore(d);
    let w = new Writer(s, 64, () => {});
    const [a, b] = await w.submitMany([ev(101), ev(102)].map(([event, json]) => ({ event, json })));
    expect([a, b]).toMatchObject([
      { status: "stored", serial: 1 },
      { status: "stored", serial: 2 },
    ]);
    await writeTxn(s, () => removeBySerial(s, 2));
    await closeStore(s);
    s = openStore(d);
    expect(readHighWater(s)).toEqual({ serial: 2, removal: 0 });
    w = new Writer(s, 64, () => {});
    expect(await w.submit(...ev(103))).toMatchObject({ status: "stored", serial: 3 });
    await closeStore(s);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("a map smaller than the data grows by itself: lmdb-js remaps instead of failing with MDB_MAP_FULL", async () => {
  const small = mkdtempSync(join(tmpdir(), "writer-map-"));
  // A 2 MiB map, and 8 MiB of events.
  const s = openStore(small, { mapSizeGb: 2 / 1024 });
  try {
    const w = new Writer(s, 64, () => {});
    const big = (n: number): [NostrEvent, string] => {
      const [e] = ev(1_000_000 + n);
      const f = { ...e, content: "y".repeat(64 * 1024) };
      return [f, storedJson(f)];
    };
    const outcomes = await w.submitMany(
      Array.from({ length: 128 }, (_, i) => big(i)).map(([event, json]) => ({ event, json })),
    );
    expect(outcomes.filter((o) => o.status !== "stored")).toEqual([]);
    expect(w.full.full).toBe(false);
    expect(s.events.getCount()).toBe(128);
  } finally {
    await closeStore(s);
    rmSync(small, { recursive: true, force: true });
  }
});

test("a flush the disk is slow to finish holds the OKs it covers, not the next batch and its fanout", async () => {
  const published: number[] = [];
  const w = new Writer(store, 64, (stored) => {
    for (const c of stored) published.push(c.serial);
  });
  // lmdb-js's `flushed`, held until released: the disk's sync, as slow as it may be.
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  Object.defineProperty(store.env, "flushed", {
    configurable: true,
    value: held,
  });
  const waitFor = async (n: number) => {
    const deadline = Date.now() + 2000;
    while (published.length < n && Date.now() < deadline) await Bun.sleep(1);
  };
  try {
    const answered: string[] = [];
    const a = w.submit(...ev(201)).then(() => answered.push("a"));
    await waitFor(1);
    const b = w.submit(...ev(202)).then(() => answered.push("b"));
    await waitFor(2);
    // The second batch is committed and handed on while the first one's flush is held.
    expect(published.length).toBe(2);
    expect(answered).toEqual([]);
    release();
    await Promise.all([a, b]);
    expect(answered).toEqual(["a", "b"]);
  } finally {
    delete (store.env as unknown as { flushed?: unknown }).flushed;
    release();
    await w.drain();
  }
});

test("every batch the writer publishes is readable by serial at that moment, with reads in every turn", async () => {
  const missing: number[] = [];
  let published = 0;
  const w = new Writer(store, 8, (stored: Committed[]) => {
    for (const c of stored) {
      published++;
      if (store.events.getBinary(serialKey(c.serial)) === undefined) missing.push(c.serial);
    }
  });
  // A reader in every turn keeps lmdb-js's read transaction renewed, as REQs under load do:
  // a batch published on visibility must not be judged against a snapshot taken before it.
  let reading = true;
  let stopped!: () => void;
  const readerDone = new Promise<void>((r) => (stopped = r));
  const reader = (): void => {
    if (!reading) {
      stopped();
      return;
    }
    store.events.getBinary(serialKey(1));
    setImmediate(reader);
  };
  reader();
  const outcomes = await Promise.all(Array.from({ length: 400 }, (_, i) => w.submit(...ev(1000 + i))));
  reading = false;
  await readerDone;
  await w.drain();
  expect(outcomes.every((o) => o.status === "stored")).toBe(true);
  expect(published).toBe(400);
  expect(missing).toEqual([]);
});

test("while the disk budget holds events, they wait in order and tasks queued behind them still run", async () => {
  let release = (): void => {};
  let holding = true;
  const asked: number[] = [];
  const w = new Writer(
    store,
    {
      maxBatch: 64,
      hold: () => {
        asked.push(Date.now());
        return holding ? new Promise<void>((r) => (release = r)) : undefined;
      },
    },
    () => {},
  );
  const events = [ev(301), ev(302), ev(303)].map(([event, json]) => ({ event, json }));
  let answered = false;
  const outcomes = w.submitMany(events).then((o) => {
    answered = true;
    return o;
  });
  // A task queued after the events (an eviction) runs while they wait.
  expect(await w.task(() => "evicted")).toBe("evicted");
  await Bun.sleep(50);
  expect(answered).toBe(false);
  // Released: the next ask finds room, and the events are stored in the order sent.
  holding = false;
  release();
  const o = await outcomes;
  expect(o.map((x) => x.status)).toEqual(["stored", "stored", "stored"]);
  const serials = o.map((x) => (x as { serial: number }).serial);
  expect(serials).toEqual([...serials].sort((a, b) => a - b));
  expect(w.held.waits).toBeGreaterThan(0);
  expect(asked.length).toBeGreaterThan(1);
  await w.drain();
});
