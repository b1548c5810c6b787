// The batched writer (src/store/writer.ts) committing 1,000 fresh events to a temp LMDB at once, vs
// awaiting each event so every one pays its own transaction and flush, as an unbatched writer would.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bench, do_not_optimize, group, run, summary } from "mitata";
import { storedJson } from "../../src/nostr/canonical.ts";
import type { NostrEvent } from "../../src/nostr/event.ts";
import { closeStore, openStore } from "../../src/store/store.ts";
import { Writer } from "../../src/store/writer.ts";
import { makeEvent } from "./fixtures.ts";

const N = 1000;

/** A writer on a fresh temp store; `close` removes it again. */
function tempWriter(): { writer: Writer; close: () => Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), "bench-writer-"));
  const store = openStore(dir);
  const writer = new Writer(store, 2048, () => {});
  return {
    writer,
    close: async () => {
      await writer.drain();
      await closeStore(store);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** New events every round (the same ids again would only hit the duplicate check). */
const freshBatch = (): [NostrEvent, string][] =>
  Array.from({ length: N }, () => {
    const e = makeEvent();
    return [e, storedJson(e)];
  });

function expectStored(outcomes: { status: string }[]): number {
  const stored = outcomes.filter((o) => o.status === "stored").length;
  if (stored !== outcomes.length)
    throw new Error(`writer.bench: ${outcomes.length - stored} events not stored`);
  return stored;
}

summary(() => {
  group(`writer: commit ${N.toLocaleString("en-US")} events to a temp LMDB`, () => {
    bench("one transaction per event (await each)", function* () {
      const t = tempWriter();
      yield {
        0: freshBatch,
        async bench(batch: [NostrEvent, string][]) {
          const outcomes = [];
          for (const [e, json] of batch) outcomes.push(await t.writer.submit(e, json));
          // drain() before the next round: a submit() made a few microtasks after a batch resolves
          // can be stranded in the writer's queue (see docs/performance/2026-11.md, "Writer").
          await t.writer.drain();
          return do_not_optimize(expectStored(outcomes));
        },
      };
      return t.close();
    }).baseline(true);

    bench("Writer batch (submit all, await all)", function* () {
      const t = tempWriter();
      yield {
        0: freshBatch,
        async bench(batch: [NostrEvent, string][]) {
          const outcomes = await Promise.all(batch.map(([e, json]) => t.writer.submit(e, json)));
          await t.writer.drain();
          return do_not_optimize(expectStored(outcomes));
        },
      };
      return t.close();
    });
  });
});

if (import.meta.main) await run();
