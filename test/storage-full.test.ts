// A full disk under a running relay: its data directory on a small tmpfs, filled by a file
// beside it and then by published notes. The relay refuses with `error: storage full: …`,
// keeps answering REQ and search, says so on /metrics and in one log line, and takes events
// again once the file is removed; after a restart every event it acknowledged is there and
// none it refused. Needs `mount -t tmpfs` (root); without it the test is skipped, saying why.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readWatermark } from "../src/store/consumer.ts";
import { closeStore, DERIVED_DIR, openStore } from "../src/store/store.ts";
import { checked } from "./crash-check.ts";
import { newKey, RawClient, signed, tempDir } from "./harness.ts";
import { metric, serve, until } from "./procs.ts";

const MIB = 2 ** 20;
const inner: string[] = [];
// Registered before tempDir's removal of root, so that it runs first: a mount point cannot go.
afterAll(() => {
  for (const at of [...inner, root]) Bun.spawnSync(["umount", "-l", at]);
});
const root = tempDir("relay-full-");
const mount = (at: string, size: string): boolean =>
  Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", at]).exitCode === 0;
const mounted = mount(root, "24m");
if (!mounted) console.log("storage-full.test.ts: skipped, cannot mount a tmpfs here (needs root)");

const free = (at = root) => {
  const s = statfsSync(at);
  return s.bavail * s.bsize;
};

describe.skipIf(!mounted)("a full disk", () => {
  test("refuses with 'error: storage full', keeps serving reads, and takes events again once there is room", async () => {
    const dir = join(root, "data");
    mkdirSync(dir);
    // Open the environments once so the filler leaves them their first pages.
    await closeStore(openStore(dir));
    const filler = join(root, "filler");
    writeFileSync(filler, Buffer.alloc(Math.max(0, free() - 3 * MIB)));
    const relay = await serve(dir);
    const c = await RawClient.connect(relay.url);
    const sk = newKey();
    const acked: string[] = [];
    const refused: string[] = [];
    let reason = "";
    for (let i = 0; i < 2000 && !reason; i++) {
      const e = signed(sk, { content: `fullword${i} ${"lorem ipsum ".repeat(1500)}` });
      const ok = await c.publish(e);
      if (ok[2] === true) acked.push(e.id);
      else {
        refused.push(e.id);
        reason = ok[3] as string;
      }
    }
    expect(reason).toStartWith("error: storage full: no space left on device");
    expect(acked.length).toBeGreaterThan(10);

    // Still full: the next event is refused the same way.
    const more = signed(sk, { content: "one more while full" });
    const again = await c.publish(more);
    expect([again[2], String(again[3]).startsWith("error: storage full: ")]).toEqual([false, true]);
    refused.push(more.id);

    // Reads go on: REQ by ids, by author, and search.
    expect(new Set(await c.req("ids", { ids: acked }))).toEqual(new Set(acked));
    expect((await c.req("author", { authors: [signed(sk).pubkey], limit: 5000 })).sort()).toEqual(
      [...acked].sort(),
    );
    expect(await c.req("search", { search: "fullword0" })).toEqual([acked[0]!]);
    expect(await c.req("refused", { ids: refused })).toEqual([]);
    expect(await metric(relay.url, 'relay_storage_full{store="log"}')).toBe(1);
    expect(await metric(relay.url, "relay_storage_full_refused_total")).toBe(refused.length);

    // Room again: the next event is stored and the derived indexes catch up.
    rmSync(filler);
    const after = signed(sk, { content: "fullwordafter stored once there is room" });
    expect(await c.publish(after)).toEqual(["OK", after.id, true, ""]);
    acked.push(after.id);
    expect(await metric(relay.url, 'relay_storage_full{store="log"}')).toBe(0);
    await until("the derived indexes to apply again", async () => {
      return (await metric(relay.url, "relay_consumer_failing")) === 0;
    });
    expect(await c.req("search", { search: "fullwordafter" })).toEqual([after.id]);
    c.close();
    relay.proc.kill("SIGTERM");
    expect(await relay.proc.exited).toBe(0);
    // One line when it became full (and at most one a minute after), one when it had room.
    const lines = relay.stderr().split("\n");
    expect(lines.filter((l) => l.includes("storage full, writes refused until there is room")).length).toBe(
      1,
    );
    expect(lines.filter((l) => l.includes("storage still full")).length).toBe(0);
    expect(relay.stdout()).toContain("storage has room again, writes accepted");

    // After a restart: `relay check` finds nothing; everything acknowledged, nothing refused, each once.
    await checked(dir);
    const next = await serve(dir);
    const d = await RawClient.connect(next.url);
    const ids = await d.req("all", { authors: [signed(sk).pubkey], limit: 5000 });
    expect(ids.sort()).toEqual([...acked].sort());
    expect(await d.req("search", { search: `fullword${acked.length - 2}` })).toEqual([
      acked[acked.length - 2]!,
    ]);
    d.close();
    next.proc.kill("SIGTERM");
    expect(await next.proc.exited).toBe(0);
  }, 120_000);

  test("a full derived/ holds back only the derived indexes: events are stored, reads stay exact, and the indexes catch up once there is room", async () => {
    const dir = join(root, "data2");
    const derived = join(dir, DERIVED_DIR);
    mkdirSync(derived, { recursive: true });
    // derived/ on a filesystem of its own, nearly full from the start; the log has room. Once
    // the filler goes there is room for the indexes to catch up, with the room a batch's write
    // may take at most through the writable map (lmdb/room.ts).
    expect(mount(derived, "16m")).toBe(true);
    inner.push(derived);
    await closeStore(openStore(dir));
    const filler = join(derived, "filler");
    writeFileSync(filler, Buffer.alloc(Math.max(0, free(derived) - 256 * 1024)));
    const relay = await serve(dir);
    const c = await RawClient.connect(relay.url);
    const sk = newKey();
    const author = signed(sk).pubkey;
    const acked: string[] = [];
    for (let i = 0; i < 300; i++) {
      const e = signed(sk, {
        content: `derivedword${i} ${Array.from({ length: 60 }, (_, j) => `w${i}x${j}`).join(" ")}`,
        tags: [["t", `topic${i % 7}`]],
      });
      expect(await c.publish(e)).toEqual(["OK", e.id, true, ""]);
      acked.push(e.id);
    }
    await until("the derived indexes to fail for lack of room", async () => {
      return (await metric(relay.url, 'relay_storage_full{store="derived"}')) === 1;
    });
    expect(await metric(relay.url, "relay_consumer_failing")).toBe(1);
    expect(await metric(relay.url, 'relay_storage_full{store="log"}')).toBe(0);
    // Reads add what the indexes have not applied: still exact.
    expect((await c.req("a", { authors: [author], limit: 5000 })).sort()).toEqual([...acked].sort());
    expect((await c.req("t", { "#t": ["topic3"], limit: 5000 })).sort()).toEqual(
      acked.filter((_, i) => i % 7 === 3).sort(),
    );
    expect(await c.req("s", { search: "derivedword299" })).toEqual([acked[299]!]);

    rmSync(filler);
    await until("the derived indexes to catch up", async () => {
      return (
        (await metric(relay.url, "relay_consumer_failing")) === 0 &&
        (await metric(relay.url, 'relay_consumer_lag_events{consumer="indexes"}')) === 0
      );
    });
    expect(await metric(relay.url, 'relay_storage_full{store="derived"}')).toBe(0);
    c.close();
    relay.proc.kill("SIGTERM");
    expect(await relay.proc.exited).toBe(0);
    expect(relay.stdout()).toContain("consumers: applying again after");
    // The failure is one line (then one a minute), however often the batch was tried.
    const failures = relay.stderr().split("\n");
    expect(failures.filter((l) => l.includes("consumers: could not apply a batch")).length).toBe(1);
    expect(failures.filter((l) => l.includes("consumers: still failing")).length).toBe(0);

    // The indexes on disk now cover the whole log, and a restart serves the same.
    const s = openStore(dir);
    try {
      for (const name of ["indexes", "search"])
        expect([name, readWatermark(s, name)?.serial]).toEqual([name, s.lastSerial]);
    } finally {
      await closeStore(s);
    }
    const next = await serve(dir);
    const d = await RawClient.connect(next.url);
    expect((await d.req("a", { authors: [author], limit: 5000 })).sort()).toEqual([...acked].sort());
    expect(await d.req("s", { search: "derivedword0" })).toEqual([acked[0]!]);
    d.close();
    next.proc.kill("SIGTERM");
    expect(await next.proc.exited).toBe(0);
  }, 120_000);
});
