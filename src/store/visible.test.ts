// The log's commits are published (to live subscribers and REQ watermarks) once visible to
// readers, ahead of the sync lmdb-js waits for before it resolves them (visible.ts). What must
// hold: the hook is in place for the lmdb-js this relay ships, it reports every commit, and
// whatever reads the store when a batch is published sees that batch.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storedJson } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import { serialKey } from "./keys.ts";
import { closeStore, openStore } from "./store.ts";
import { visibilityOf } from "./visible.ts";
import type { Committed } from "./writer.ts";
import { Writer } from "./writer.ts";

const dir = mkdtempSync(join(tmpdir(), "visible-"));
const store = openStore(dir);
afterAll(async () => {
  await closeStore(store);
  rmSync(dir, { recursive: true, force: true });
});

const ev = (n: number): { event: NostrEvent; json: string } => {
  const event: NostrEvent = {
    id: n.toString(16).padStart(64, "0"),
    pubkey: "ab".repeat(32),
    created_at: 1_700_000_000 + n,
    kind: 1,
    tags: [],
    content: `visible ${n}`,
    sig: "cd".repeat(64),
  };
  return { event, json: storedJson(event) };
};

test("lmdb-js reports commits of the log visible before they resolve, and a read then sees them", async () => {
  const v = visibilityOf(store.env);
  // An lmdb-js without the call would publish on resolution again: this names the change.
  expect(v.hooked).toBe(true);
  expect(visibilityOf(store.env)).toBe(v);
  const key = Buffer.from("visible-test");
  const value = (i: number) => Buffer.from([i]);
  let early = 0;
  for (let i = 0; i < 50; i++) {
    let seen: Buffer | undefined;
    let resolved = false;
    const done = store.env.transaction(() => {
      store.meta.put(key, value(i));
      v.whenVisible(
        () => {
          if (!resolved) early++;
          seen = store.meta.get(key);
        },
        () => store.meta.get(key)?.equals(value(i)) === true,
      );
    });
    await done.then(() => (resolved = true));
    // Run or not (the report may come after the resolution), it never runs before a read
    // sees the commit.
    if (seen !== undefined) expect(seen).toEqual(value(i));
  }
  // The report reaches JavaScript first nearly always (49-50 of 50 here); none at all would
  // mean the hook is dead.
  expect(early).toBeGreaterThan(0);
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
  const outcomes = await Promise.all(
    Array.from({ length: 400 }, (_, i) => w.submit(ev(1000 + i).event, ev(1000 + i).json)),
  );
  reading = false;
  await readerDone;
  await w.drain();
  expect(outcomes.every((o) => o.status === "stored")).toBe(true);
  expect(published).toBe(400);
  expect(missing).toEqual([]);
});
