// The log's commits leave their meta page to the next sync of the data file (MDB_NOMETASYNC,
// store/store.ts), so that live subscribers get an event after one sync instead of two; an OK
// must still mean on disk: every OK waits for a sync of the data file that covers its commit.
import { expect, test } from "bun:test";
import { syncLog } from "../src/store/log-sync.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import { newKey, RawClient, signed, startTestRelay, tempDir } from "./harness.ts";

test("every OK true is sent after a sync of the log's data file that covers its commit", async () => {
  const relay = startTestRelay();
  const c = await RawClient.connect(relay.url);
  const sk = newKey();
  const s = relay.ctx.store;
  for (let i = 0; i < 20; i++) {
    const ok = await c.publish(signed(sk, { content: `synced ${i}` }));
    expect(ok[2]).toBe(true);
    // One EVENT in flight: the newest serial is this event's.
    expect(s.syncedSerial).toBe(s.lastSerial);
  }
  expect(s.syncedSerial).toBeGreaterThanOrEqual(20);
  c.close();
});

test("syncLog records how far it synced: the commits made before it was called", async () => {
  const s = openStore(tempDir("log-sync-"));
  expect(s.syncedSerial).toBe(0);
  s.lastSerial = 7;
  await syncLog(s);
  expect(s.syncedSerial).toBe(7);
  s.lastSerial = 5;
  await syncLog(s);
  expect(s.syncedSerial).toBe(7);
  await closeStore(s);
});
