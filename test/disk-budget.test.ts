// The disk budget (store.maxDiskGb) on a real relay over real LMDB: a steady publisher against a
// budget of a few MiB. The data in use (what the budget counts: file pages less free pages) is
// brought back under it, the data directory stays within twice the budget plus 8 MiB (at this
// size tighter than what docs/operations.md states for any rate, budget x 1.25 + 16 MiB;
// test/disk-flood.test.ts floods against that), every EVENT is answered and every REQ too meanwhile; kinds 0, 3 and
// 10002, pinned kinds and pinned authors survive however old. With nothing left to evict the
// relay refuses with `error: storage full`, keeps serving reads, and takes events again once
// the budget allows.
import { describe, expect, test } from "bun:test";
import type { Event } from "nostr-tools/pure";
import { getPublicKey } from "nostr-tools/pure";
import { diskUse } from "../src/store/disk-use.ts";
import { dirBytes, newKey, now, RawClient, signed, startTestRelay } from "./harness.ts";
import { metric, until } from "./procs.ts";

const MIB = 2 ** 20;
const gb = (bytes: number): string => String(bytes / 2 ** 30);

const WORDS = "amber basil cedar delta ember fjord grove heron indigo juniper kestrel lumen".split(" ");
/** A note of forty words drawn from a few thousand, so search has postings to keep and purge. */
/**
 * Forty words of note `i`; the words repeat every few hundred notes, so the note's number ends it:
 * two notes signed in the same second with the same text would be one event, answered
 * "duplicate" and counted twice.
 */
const text = (i: number): string =>
  `${Array.from({ length: 40 }, (_, k) => `${WORDS[(i + k) % WORDS.length]}${(i * 31 + k * 7) % 300}`).join(" ")} n${i}`;

const ids = (es: Event[]): string[] => es.map((e) => e.id).sort();

describe("the disk budget", () => {
  test("a steady publisher stays within the budget and its slack; every write and read is answered; pinned and replaceable events survive", async () => {
    const budget = 4 * MIB;
    const pinned = newKey();
    const relay = startTestRelay({
      "store.maxDiskGb": gb(budget),
      "store.pinKinds": "30023",
      "store.pinAuthors": getPublicKey(pinned),
    });
    const c = await RawClient.connect(relay.url);
    const old = now() - 30 * 86400;
    // The oldest events of all: what survives eviction however old, and what does not.
    const authors = Array.from({ length: 12 }, () => newKey());
    const profiles = authors.flatMap((sk, a) => [
      signed(sk, { kind: 0, created_at: old - 10, content: JSON.stringify({ name: `v1 ${a}` }) }),
      signed(sk, { kind: 0, created_at: old, content: JSON.stringify({ name: `v2 ${a}` }) }),
      signed(sk, { kind: 3, created_at: old, tags: [["p", getPublicKey(authors[(a + 1) % 12]!)]] }),
      signed(sk, { kind: 10002, created_at: old, tags: [["r", "wss://relay.example.com"]] }),
    ]);
    const newestReplaceable = profiles.filter((_, i) => i % 4 !== 0);
    const pinnedNotes = Array.from({ length: 30 }, (_, i) =>
      signed(pinned, { created_at: old + i, content: `pinned ${text(i)}` }),
    );
    const articles = Array.from({ length: 10 }, (_, i) =>
      signed(authors[i]!, { kind: 30023, created_at: old + i, tags: [["d", `a${i}`]], content: text(i) }),
    );
    const oldNotes = Array.from({ length: 30 }, (_, i) =>
      signed(authors[i % 12]!, { created_at: old + 100 + i, content: `evictable ${text(i)}` }),
    );
    for (const e of [...profiles, ...pinnedNotes, ...articles, ...oldNotes])
      expect((await c.publish(e))[2]).toBe(true);

    // A reader asks for the newest notes every 100 ms while the publisher writes.
    const reader = await RawClient.connect(relay.url);
    let reads = 0;
    let publishing = true;
    const reading = (async () => {
      while (publishing) {
        // One subscription id: a REQ replaces the last one's subscription.
        const got = await reader.req("r", { kinds: [1], limit: 20 });
        expect(got.length).toBeGreaterThan(0);
        reads++;
        await Bun.sleep(100);
      }
    })();

    const sk = newKey();
    let sent = 0;
    let accepted = 0;
    let maxDir = 0;
    let maxInUse = 0;
    const sample = () => {
      maxDir = Math.max(maxDir, dirBytes(relay.dir));
      maxInUse = Math.max(maxInUse, diskUse(relay.ctx.store).inUse);
    };
    const sampler = setInterval(sample, 100);
    try {
      const end = Date.now() + 15_000;
      while (Date.now() < end) {
        const batch = Array.from({ length: 40 }, () => signed(sk, { content: text(sent++) }));
        const oks = await Promise.all(batch.map((e) => c.publish(e)));
        for (const ok of oks) if (ok[2] === true) accepted++;
      }
    } finally {
      publishing = false;
      clearInterval(sampler);
    }
    await reading;
    sample();

    // Every EVENT answered, and accepted: there was always something to evict.
    expect(accepted).toBe(sent);
    expect(reads).toBeGreaterThan(20);
    const removed = relay.ctx.retention!.removedByBudget;
    expect(removed).toBeGreaterThan(0);
    // The data in use back under the budget once eviction has caught up; the directory within
    // the slack the docs state all along.
    await until(
      "the data in use to be under the budget",
      () => diskUse(relay.ctx.store).inUse <= budget,
      10_000,
    );
    expect({ maxDir: maxDir <= 2 * budget + 8 * MIB, maxInUse }).toMatchObject({ maxDir: true });
    expect(await metric(relay.url, 'relay_events_removed_total{by="budget"}')).toBeGreaterThanOrEqual(
      removed,
    );
    // Read again, /metrics may find the derived indexes' last batches applied since (a few pages
    // over, seen in CI: 4,247,552 bytes for 4,194,304): the next look evicts for them.
    await until(
      "/metrics to show the data in use under the budget",
      async () => ((await metric(relay.url, "relay_disk_in_use_bytes")) ?? Infinity) <= budget,
      10_000,
    );
    expect(await metric(relay.url, "relay_disk_budget_bytes")).toBe(budget);

    // Kinds 0, 3 and 10002, pinned kinds and pinned authors survive; the old notes are gone.
    const kept = (filter: object) => c.req("k", { ...filter, limit: 5000 }).then((x) => x.sort());
    expect(await kept({ kinds: [0, 3, 10002] })).toEqual(ids(newestReplaceable));
    expect(await kept({ authors: [getPublicKey(pinned)] })).toEqual(ids(pinnedNotes));
    expect(await kept({ kinds: [30023] })).toEqual(ids(articles));
    expect(await c.req("gone", { ids: oldNotes.map((e) => e.id) })).toEqual([]);
    c.close();
    reader.close();
  }, 90_000);

  test("with nothing left to evict, events are refused with 'error: storage full' while reads go on, until the budget allows", async () => {
    const budget = 2 * MIB;
    const relay = startTestRelay({ "store.maxDiskGb": gb(budget), "store.pinKinds": "1" });
    const c = await RawClient.connect(relay.url);
    const sk = newKey();
    const stored: string[] = [];
    let refusal: unknown[] | undefined;
    for (let i = 0; i < 20_000 && !refusal; i++) {
      const e = signed(sk, { content: text(i) });
      const ok = await c.publish(e);
      if (ok[2] === true) stored.push(e.id);
      else refusal = ok;
    }
    expect(refusal?.[2]).toBe(false);
    expect(String(refusal?.[3])).toMatch(
      /^error: storage full: the data \(\d+\.\d MiB in use\) is over the disk budget \(store\.maxDiskGb, 2\.0 MiB\) and nothing is left to evict$/,
    );
    // Nothing was evicted (every note is pinned), and every stored note is still served.
    expect(relay.ctx.retention!.removedByBudget).toBe(0);
    expect((await c.req("all", { kinds: [1], limit: 5000 })).sort()).toEqual([...stored].sort());
    expect(await c.req("s", { search: "amber0", limit: 5 })).not.toEqual([]);
    const more = signed(sk, { kind: 7, content: "+", tags: [["e", stored[0]!]] });
    expect((await c.publish(more))[3]).toStartWith("error: storage full: ");
    expect(await metric(relay.url, "relay_disk_budget_full")).toBe(1);
    expect(await metric(relay.url, "relay_storage_full_refused_total")).toBe(2);

    // The operator raises the budget (a live setting): events are taken again within seconds.
    relay.ctx.config = { ...relay.ctx.config, "store.maxDiskGb": Number(gb(8 * MIB)) };
    await until("the budget to allow writes again", () => relay.ctx.retention!.full === undefined, 5000);
    const after = signed(sk, { content: "room again" });
    expect(await c.publish(after)).toEqual(["OK", after.id, true, ""]);
    expect(await metric(relay.url, "relay_disk_budget_full")).toBe(0);
    c.close();
  }, 90_000);
});
