import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unsignedNote } from "../../test/fixtures/stored-events.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Committed } from "../store/batch.ts";
import { closeStore, openStore } from "../store/store.ts";
import type { Store } from "../store/types.ts";
import { Writer } from "../store/writer.ts";
import type { Outgoing } from "./outbox.ts";
import { Outbox } from "./outbox.ts";

const dirs: string[] = [];
const stores: Store[] = [];
afterAll(async () => {
  for (const s of stores) await closeStore(s);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let n = 0;
const ev = (): [NostrEvent, string] => unsignedNote(++n);

/** A real store and writer whose commits go to `onCommit` (set once the outbox exists). */
function setup() {
  const dir = mkdtempSync(join(tmpdir(), "outbox-"));
  dirs.push(dir);
  const store = openStore(dir);
  stores.push(store);
  const sink: { onCommit: (c: Committed[]) => void } = { onCommit: () => {} };
  const writer = new Writer(store, 2048, (stored) => sink.onCommit(stored));
  const commit = async (k: number): Promise<string[]> => {
    const items = Array.from({ length: k }, () => ev());
    await writer.submitMany(items.map(([event, json]) => ({ event, json })));
    return items.map(([e]) => e.id);
  };
  const outbox = (max: number, fromStream: (id: string) => boolean = () => false) => {
    const o = new Outbox(store, dir, () => writer.visibleSerial, max);
    sink.onCommit = (c) => o.committed(c, fromStream);
    return o;
  };
  return { store, writer, commit, outbox };
}

/** Hands out and acknowledges everything, `batch` at a time; returns the ids in order. */
function drainAll(o: Outbox, batch = 100): string[] {
  const out: string[] = [];
  for (let got = o.next(batch); got.length > 0; got = o.next(batch))
    for (const x of got) {
      out.push(x.id);
      o.acked(x);
    }
  return out;
}

test("committed events are handed out in serial order and the watermark follows the acknowledgements", async () => {
  const { commit, outbox, writer } = setup();
  const o = outbox(100);
  const base = writer.visibleSerial;
  const ids = await commit(3);
  const [first, second, third] = o.next(10) as [Outgoing, Outgoing, Outgoing];
  expect([first.id, second.id, third.id]).toEqual(ids);
  expect(o.next(10)).toEqual([]);
  o.acked(second);
  expect(o.watermark).toBe(base);
  o.acked(first);
  expect(o.watermark).toBe(base + 2);
  o.failed(third);
  expect(o.next(10).map((x) => x.id)).toEqual([third.id]);
  o.acked(third);
  expect(o.watermark).toBe(base + 3);
  expect(o.size).toBe(0);
});

test("events being applied from the stream are not queued, and the watermark passes over them", async () => {
  const { commit, outbox, writer } = setup();
  let skipping = true;
  const o = outbox(100, () => skipping);
  await commit(2);
  skipping = false;
  const mine = await commit(1);
  expect(drainAll(o)).toEqual(mine);
  expect(o.watermark).toBe(writer.visibleSerial);
});

test("beyond its bound the outbox reads the rest back from the log, in order, each once", async () => {
  const { commit, outbox, store } = setup();
  const o = outbox(4);
  const ids = await commit(11);
  expect(o.size).toBe(11);
  // The last one is not in memory: its OK (okAfter = "stream") waits for the watermark instead.
  const last = o.whenAcked(ids[10]!, store.lastSerial, 60_000);
  expect(drainAll(o, 3)).toEqual(ids);
  expect(await last).toBe(true);
  // Commits after the read-back are queued as they come.
  const more = await commit(2);
  expect(drainAll(o)).toEqual(more);
});

test("a restart resumes from the saved watermark: what was not acknowledged is read back from the log", async () => {
  const { commit, outbox, store } = setup();
  const o = outbox(100);
  const ids = await commit(6);
  const got = o.next(3);
  for (const x of got) o.acked(x);
  o.next(10); // handed out, never acknowledged: the process dies here
  o.save();
  const again = outbox(100);
  expect(again.watermark).toBe(store.lastSerial - 3);
  expect(drainAll(again)).toEqual(ids.slice(3));
});

test("a store that joins a cluster appends nothing it held before, but all it commits from then on", async () => {
  const { commit, outbox } = setup();
  await commit(5);
  const o = outbox(100);
  expect(o.size).toBe(0);
  expect(o.next(10)).toEqual([]);
  // Committed, then the process dies before anything was acknowledged or saved.
  const after = await commit(2);
  expect(drainAll(outbox(100))).toEqual(after);
});

test("whenAcked resolves once the stream has the event, at once for an event not queued here, and false on timeout", async () => {
  const { commit, outbox } = setup();
  const o = outbox(100);
  const [a, b] = await commit(2);
  const waitA = o.whenAcked(a!, undefined, 60_000);
  const waitB = o.whenAcked(b!, undefined, 1);
  const [x] = o.next(1) as [Outgoing];
  o.acked(x);
  expect(await waitA).toBe(true);
  expect(await waitB).toBe(false);
  expect(await o.whenAcked("ff".repeat(32), undefined, 1)).toBe(true);
});
