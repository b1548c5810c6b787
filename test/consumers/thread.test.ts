// The relay applies the consumers' batches on a thread of their own. A reader on the main thread
// reads a consumer's watermark and adds the views of the batches after it; when the thread's
// reply comes, the runner drops the batch it applied from memory. These check that a reader in
// that very turn of the event loop, whose read transaction was opened before the thread
// committed, still finds every event: on disk or among the views, never in neither.
import { expect, test } from "bun:test";
import { loadConfig } from "../../src/config/load.ts";
import { openConsumers } from "../../src/consumers/registry.ts";
import type { QueryOptions } from "../../src/indexes/query.ts";
import { countQuery, runQuery } from "../../src/indexes/query.ts";
import { storedJson } from "../../src/nostr/canonical.ts";
import { readWatermark } from "../../src/store/consumer.ts";
import { INDEXES } from "../../src/store/index-db.ts";
import { closeStore, openStore } from "../../src/store/store.ts";
import { Writer } from "../../src/store/writer.ts";
import { cleanup, newKey, now, signed, tempDir } from "../harness.ts";

// Batches are applied only when the test flushes.
const configFor = (data: string) =>
  loadConfig({ flags: { data, "consumers.intervalMs": "1000000", "consumers.maxBatch": "1000000" } });

test("a reader in the turn the consumers' thread reports a batch applied finds all of it", async () => {
  const dir = tempDir("consumers-thread-");
  const s = openStore(dir);
  const d = openConsumers(s, configFor(dir), { thread: true, log: () => {} });
  cleanup(async () => {
    await d.runner.stop();
    await closeStore(s);
  });
  const writer = new Writer(s, 100, (stored, removed, high) => d.runner.committed(stored, removed, high));
  const sk = newKey();
  const t0 = now();
  const o = (): QueryOptions => ({
    hwm: writer.visibleSerial,
    defaultLimit: 500,
    maxLimit: 500,
    yieldEvery: 64,
  });
  const ids = new Set<string>();

  for (let round = 0; round < 3; round++) {
    const events = Array.from({ length: 20 }, (_, i) =>
      signed(sk, {
        created_at: t0 - round * 100 - i,
        tags: [["t", "thread"]],
        content: `thread words of round ${round}`,
      }),
    );
    const outcomes = await writer.submitMany(events.map((e) => ({ event: e, json: storedJson(e) })));
    expect(outcomes.every((x) => x.status === "stored")).toBe(true);
    for (const e of events) ids.add(e.id);
    const before = readWatermark(s, INDEXES)?.gen ?? 0;

    const applied = d.runner.flush();
    // A read now opens this thread's read transaction, before the other thread commits.
    readWatermark(s, INDEXES);
    // Long enough for the thread to commit (its reply then waits for this turn to end), and
    // the reply is delivered before the timer that would reset the read transaction.
    Bun.sleepSync(300);
    await applied;
    const req = await runQuery(s, [{ tags: [["t", ["thread"]]] }], o());
    const count = await countQuery(s, [{ kinds: [1], tags: [["t", ["thread"]]] }], o());
    const found = await runQuery(s, [{ search: "thread words", limit: 500 }], { ...o(), search: d.searcher });
    const got = req!.map((j) => (JSON.parse(j) as { id: string }).id);
    expect({ n: got.length, count, found: found!.length }).toEqual({
      n: ids.size,
      count: ids.size,
      found: ids.size,
    });
    expect(new Set(got)).toEqual(ids);
    // The batch was applied, and on the other thread.
    expect(d.runner.failure).toBeUndefined();
    expect(readWatermark(s, INDEXES)!.gen).toBeGreaterThan(before);
  }
});

test("the thread applies to the store it was opened with, whatever the config's data directory", async () => {
  const dir = tempDir("consumers-thread-");
  const elsewhere = tempDir("consumers-thread-elsewhere-");
  const s = openStore(dir);
  const logged: string[] = [];
  // A config naming another directory (the tests' configs name none: ./data).
  const d = openConsumers(s, configFor(elsewhere), { thread: true, log: (m) => logged.push(m) });
  cleanup(async () => {
    await d.runner.stop();
    await closeStore(s);
  });
  const writer = new Writer(s, 100, (stored, removed, high) => d.runner.committed(stored, removed, high));
  const e = signed(newKey(), { content: "applied where it is stored" });
  expect((await writer.submit(e, storedJson(e))).status).toBe("stored");
  await d.runner.flush();
  expect(logged).toEqual([]);
  expect(readWatermark(s, INDEXES)?.serial).toBe(writer.visibleSerial);
});
