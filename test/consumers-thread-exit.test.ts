// The consumers' thread can end without an error event (ended from outside, or it left by
// itself). From then on nothing may wait for it: a batch sent there would hold the writer once
// the backlog is full, and a search walk sent there would hold its REQ. The runner then applies
// in its own thread, and walks run on the main thread.
//
// The thread is ended here between its batches: Bun's `terminate()` of a worker in the middle
// of an LMDB write transaction does not always end it (seen: the thread neither exits nor
// answers), so ending it while it works would not test this deterministically.
import { expect, test } from "bun:test";
import { loadConfig } from "../src/config/load.ts";
import type { GenPayload } from "../src/consumers/apply.ts";
import { ThreadApplier } from "../src/consumers/apply.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import { storedJson } from "../src/nostr/canonical.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import { Writer } from "../src/store/writer.ts";
import { cleanup, newKey, now, RawClient, signed, startTestRelay, tempDir } from "./harness.ts";

type Ends = { worker: { terminate(): Promise<number> } };

/** Whether `p` settles within 3 s, and how. */
const settled = (p: Promise<unknown>) =>
  Promise.race([
    p.then(
      () => "resolved",
      (err: Error) => `rejected: ${err.message}`,
    ),
    Bun.sleep(3000).then(() => "still waiting"),
  ]);

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await Bun.sleep(10);
}

test("after the consumers' thread ends, a batch or a walk sent to it fails at once", async () => {
  const dir = tempDir("consumers-thread-exit-");
  const s = openStore(dir);
  const d = openConsumers(s, loadConfig({ flags: { data: dir } }), { log: () => {} });
  const writer = new Writer(s, 100, () => {});
  const e = signed(newKey(), { created_at: now(), content: "thread exit words" });
  expect((await writer.submit(e, storedJson(e))).status).toBe("stored");
  const thread = new ThreadApplier(
    dir,
    d.runner.consumers.map((c) => c.name),
  );
  cleanup(async () => {
    await thread.close();
    await closeStore(s);
  });
  // A new one each time: sending hands its arrays over to the thread.
  const payload = (n: number, adds: number[]): GenPayload => ({
    n,
    maxSerial: s.lastSerial,
    maxSeq: s.lastRemoval,
    adds: Float64Array.from(adds),
    removes: new Float64Array(0),
    bytes: 0,
  });
  expect(await settled(thread.apply(payload(1, [s.lastSerial])))).toBe("resolved");
  await (thread as unknown as Ends).worker.terminate();
  await until(() => thread.broken);
  expect(thread.broken).toBe(true);
  expect(thread.ready()).toBe(false);
  expect(await settled(thread.apply(payload(2, [])))).toStartWith("rejected: consumers' thread");
  expect(await settled(thread.walk({} as never))).toStartWith("rejected: consumers' thread");
});

test("a relay whose consumers' thread ends goes on: every event it OK'd is found by REQ and by search", async () => {
  const relay = startTestRelay();
  const { runner, search } = relay.ctx.consumers;
  search!.offloadFrom = 0; // every search walk may go to the consumers' thread
  const c = await RawClient.connect(relay.url);
  cleanup(() => c.close());
  const sk = newKey();
  const ids: string[] = [];
  const publish = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const e = signed(sk, { created_at: now() - ids.length, content: `thread exit words ${ids.length}` });
      expect(await c.publish(e)).toEqual(["OK", e.id, true, ""]);
      ids.push(e.id);
    }
  };
  await publish(3);
  await runner.settle();
  expect((await c.req("s0", { search: "thread exit words" })).sort()).toEqual([...ids].sort());
  const thread = (runner as unknown as { applier: Ends & { broken: boolean } }).applier;
  await thread.worker.terminate();
  await until(() => thread.broken);
  // A search once it is gone, events stored after it, then applied in the relay's own thread.
  expect((await c.req("s1", { search: "thread exit words" })).sort()).toEqual([...ids].sort());
  await publish(3);
  await runner.settle();
  expect(runner.waitingEvents()).toBe(0);
  expect((await c.req("q", { kinds: [1] })).sort()).toEqual([...ids].sort());
  expect((await c.req("s2", { search: "thread exit words" })).sort()).toEqual([...ids].sort());
});
