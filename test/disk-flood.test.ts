// The disk budget under a flood (docs/operations.md, the slack): ~4 KB notes from one connection
// as fast as the relay answers, many times the budget, against a real relay over real LMDB. The
// data directory, sampled every 100 ms, stays within the bound the budget promises (budget ×
// 1.25 + 16 MiB) at every sample; every EVENT is answered OK and REQ answers throughout; the
// kind 0 and the newest notes are served afterwards, the oldest are the ones gone, and what was
// evicted is gone from REQ and COUNT alike. With search off: with it on, a flood of notes that
// each hold a tenth of a small vocabulary rewrites the whole search index every batch, and the
// bound does not hold yet (docs/operations.md says by how much).
import { describe, expect, test } from "bun:test";
import { dirBytes, newKey, RawClient, signed, startTestRelay } from "./harness.ts";
import { metric } from "./procs.ts";

const MIB = 2 ** 20;

const WORDS = "amber basil cedar delta ember fjord grove heron indigo juniper kestrel lumen".split(" ");
/** About 4 KB of words from a few thousand, numbered so that no two notes are the same. */
const text = (i: number): string =>
  `n${i} ${Array.from({ length: 450 }, (_, k) => `${WORDS[(i + k) % WORDS.length]}${(i * 31 + k * 7) % 400}`).join(" ")}`;

async function flood(): Promise<void> {
  const budget = 16 * MIB;
  const bound = budget * 1.25 + 16 * MIB;
  const sk = newKey();
  const start = Math.floor(Date.now() / 1000) - 20_000;
  // 12,000 notes of ~4 KB (~48 MiB of JSON, three budgets), signed before the flood (the relay
  // runs in this process: seconds of signing would hold its thread), then sent 50 in flight.
  const notes = Array.from({ length: 12_000 }, (_, i) =>
    signed(sk, { created_at: start + i, content: text(i) }),
  );
  const relay = startTestRelay({
    "store.maxDiskGb": String(budget / 2 ** 30),
    "search.enabled": "false",
  });
  const c = await RawClient.connect(relay.url);
  const probe = await RawClient.connect(relay.url);
  const profile = signed(sk, { kind: 0, created_at: start - 1, content: JSON.stringify({ name: "flood" }) });
  expect((await c.publish(profile))[2]).toBe(true);

  let peak = 0;
  let over = 0;
  let samples = 0;
  const sampler = setInterval(() => {
    const b = dirBytes(relay.dir);
    samples++;
    peak = Math.max(peak, b);
    if (b > bound) over++;
  }, 100);
  let flooding = true;
  let reads = 0;
  const reading = (async () => {
    while (flooding) {
      // Answered (EOSE) every time; once notes are stored, with some.
      if ((await probe.req("p", { kinds: [1], limit: 10 })).length > 0) reads++;
      await Bun.sleep(200);
    }
  })();
  const outcomes: unknown[][] = [];
  let slowest = 0;
  try {
    for (let i = 0; i < notes.length; i += 50)
      outcomes.push(
        ...(await Promise.all(
          notes.slice(i, i + 50).map(async (e) => {
            const t = performance.now();
            const from = c.frames.length;
            c.send(["EVENT", e]);
            const ok = await c.next((f) => f[0] === "OK" && f[1] === e.id, 30_000, from);
            slowest = Math.max(slowest, performance.now() - t);
            return ok;
          }),
        )),
      );
    flooding = false;
    await reading;
    await Bun.sleep(2000);
  } finally {
    flooding = false;
    clearInterval(sampler);
  }

  // Every EVENT accepted: there was always something to evict.
  expect(outcomes.filter((o) => o[2] !== true)).toEqual([]);
  expect(reads).toBeGreaterThan(5);
  // The bound held at every sample. The slowest OK and the peak are in the message, not
  // asserted: one CI run, where this test took twice its usual 20 s, saw an OK take over 10 s
  // (locally about 1 s; the cause is not found yet). The 30 s wait for each OK above still fails
  // a relay that stops answering.
  expect({
    samples: samples > 50,
    over,
    peakMiB: +(peak / MIB).toFixed(1),
    slowestOkMs: Math.round(slowest),
  }).toEqual({
    samples: true,
    over: 0,
    peakMiB: expect.any(Number),
    slowestOkMs: expect.any(Number),
  });
  // The profile stays; the newest notes are served; the oldest went first, and what went is
  // gone from REQ and COUNT alike.
  expect(await c.req("k0", { kinds: [0] })).toEqual([profile.id]);
  const newest = notes.slice(-200).map((e) => e.id);
  expect((await c.req("new", { kinds: [1], limit: 200 })).sort()).toEqual([...newest].sort());
  const kept = new Set(await c.req("all", { kinds: [1], limit: 20_000 }));
  const evicted = await metric(relay.url, 'relay_events_removed_total{by="budget"}');
  expect(kept.size).toBe(notes.length - (evicted ?? 0));
  // Kept: a run of the newest, none older than an evicted one.
  const firstKept = notes.findIndex((e) => kept.has(e.id));
  expect(notes.slice(firstKept).every((e) => kept.has(e.id))).toBe(true);
  expect(firstKept).toBeGreaterThan(0);
  c.send(["COUNT", "c", { kinds: [1] }]);
  const counted = await c.next((f) => f[0] === "COUNT" && f[1] === "c");
  expect(counted[2]).toEqual({ count: kept.size });
  c.close();
  probe.close();
}

describe("the disk budget under a flood", () => {
  test("search off: ~4 KB notes at the relay's pace, three budgets' worth, keep the directory within budget x 1.25 + 16 MiB at every sample", async () => {
    await flood();
  }, 180_000);
});
