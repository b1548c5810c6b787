// The index ranges' heads kept between REQs (src/indexes/heads.ts) against batches being applied
// on the consumers' thread: REQs run again and again while each batch is applied (its entries and
// the indexes' watermark land on disk before the runner hears that the apply is over), and every
// answer must hold every committed event, as a model says.
import { afterAll, expect, test } from "bun:test";
import { finalizeEvent, generateSecretKey, getPublicKey } from "nostr-tools/pure";
import { loadConfig } from "../src/config/load.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import { headsOf } from "../src/indexes/indexes.ts";
import { runQuery } from "../src/indexes/query.ts";
import { STORED_ID_OFFSET, storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import type { Filter } from "../src/nostr/filter.ts";
import { matchFilter } from "../src/nostr/filter.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import { Writer } from "../src/store/writer.ts";
import { tempDir } from "./harness.ts";

// Batches are applied only when the test says so.
const LAGGING = loadConfig({ flags: { "consumers.intervalMs": "1000000", "consumers.maxBatch": "1000000" } });

const dir = tempDir("heads-");
const store = openStore(dir);
const consumers = openConsumers(store, LAGGING, { log: () => {}, thread: true });
const writer = new Writer(store, 256, (st, rm, high) => consumers.runner.committed(st, rm, high));
afterAll(async () => {
  await writer.drain();
  await consumers.runner.stop();
  await closeStore(store);
});

const keys = Array.from({ length: 6 }, () => generateSecretKey());
const [A, B, C, D] = keys.map(getPublicKey) as [string, string, string, string];
const TAGS = ["x", "y", "z", "w"];

// One filter each, with limits below and above what the ranges hold.
const FILTERS: Filter[] = [
  { authors: [A, B], kinds: [1, 7], limit: 5000 },
  { authors: [A, B], kinds: [1, 7], limit: 30 },
  { tags: [["t", ["x"]]], limit: 5000 },
  { authors: [C], limit: 100 },
  { authors: [D], kinds: [1], limit: 5000 },
  { tags: [["t", ["z", "w"]]], limit: 40 },
  { kinds: [1], limit: 5000 },
  { limit: 300 },
  { kinds: [7], tags: [["t", ["y"]]], limit: 5000 },
];

// Batches large enough that applying one takes a while (the window the test reads in).
const ROUNDS = 20;
const PER_ROUND = 150;

const newestFirst = (a: NostrEvent, b: NostrEvent): number =>
  b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

test("REQs read while batches are applied see every committed event, from kept heads or from disk", async () => {
  const written: NostrEvent[] = [];
  let during = 0;
  let mismatch = "";
  const check = async (when: string) => {
    const o = { hwm: writer.visibleSerial, defaultLimit: 5000, maxLimit: 5000, yieldEvery: 1000 };
    for (const f of FILTERS) {
      const got = (await runQuery(store, [f], o))!.map((j) =>
        j.slice(STORED_ID_OFFSET, STORED_ID_OFFSET + 64),
      );
      const want = written
        .filter((e) => matchFilter(f, e))
        .sort(newestFirst)
        .slice(0, f.limit)
        .map((e) => e.id);
      if (!mismatch && JSON.stringify(got) !== JSON.stringify(want))
        mismatch = `${when} ${JSON.stringify(f)}: ${got.length} ids, the model has ${want.length}`;
    }
  };
  for (let round = 0; round < ROUNDS; round++) {
    // Each batch touches two authors and one tag value of the several the REQs read, so some
    // ranges are served from kept heads while others change under the reads.
    const batch = Array.from({ length: PER_ROUND }, (_, i) => {
      const k = (round + (i % 2)) % keys.length;
      const e = finalizeEvent(
        {
          kind: i % 2 === 0 ? 1 : 7,
          created_at: 1_700_000_000 + round * PER_ROUND + i,
          tags: [["t", TAGS[round % TAGS.length]!]],
          content: `round ${round} event ${i}`,
        },
        keys[k]!,
      ) as NostrEvent;
      return e;
    });
    const outcomes = await Promise.all(batch.map((e) => writer.submit(e, storedJson(e))));
    expect(outcomes.every((o) => o.status === "stored")).toBe(true);
    written.push(...batch);
    await check(`round ${round} before its batch is applied`);
    // The batch is applied on the consumers' thread meanwhile: read at every turn until it is.
    // And the runner hears of it only after reads that see it on disk (the indexes' watermark
    // included): as when those reads come between the commit and the consumers' thread's answer.
    const heard: (() => void)[] = [];
    const tell = consumers.indexes.applied.bind(consumers.indexes);
    consumers.indexes.applied = (v, gen) => void heard.push(() => tell(v, gen));
    let applied = false;
    const flush = consumers.runner.flush().then(() => {
      applied = true;
    });
    // Every other round reads nothing until the runner has heard: the heads kept before the
    // batch must then be forgotten (no read in between replaced them).
    const watch = round % 2 === 0;
    while (watch && !applied) {
      await check(`round ${round} while its batch is applied`);
      during++;
      await new Promise((r) => setImmediate(r));
    }
    await flush;
    expect(heard.length).toBe(1);
    if (watch) await check(`round ${round} applied, not yet heard of`);
    consumers.indexes.applied = tell;
    for (const h of heard) h();
    await check(`round ${round} after its batch is applied`);
  }
  expect(mismatch).toBe("");
  expect(during).toBeGreaterThan(ROUNDS / 2);
  // The heads were used, not only filled.
  expect(headsOf(store)!.hits).toBeGreaterThan(100);
});
