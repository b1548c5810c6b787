// Data commands beside a running relay, as operators run them: a real `relay serve` process and
// `relay import`, `relay delete`, `relay export`, `relay reindex` and a second `relay serve` as
// processes of their own on the same data directory.
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Event } from "nostr-tools/pure";
import { getPublicKey } from "nostr-tools/pure";
import { newKey, now, RawClient, signed, tempDir } from "./harness.ts";
import { cli, serve, spawnCli, stop } from "./procs.ts";

const newDir = (): string => tempDir("relay-multiproc-");

/** Waits for `get` to satisfy `done`, asking again until a generous deadline; returns the last value. */
async function eventually<T>(get: () => Promise<T>, done: (v: T) => boolean, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (done(v) || Date.now() > until) return v;
    await Bun.sleep(100);
  }
}

const sorted = (xs: Iterable<string>): string[] => [...xs].sort();
const exportedIds = (jsonl: string): string[] =>
  jsonl
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as Event).id);

describe("relay import beside a running relay", () => {
  test("every event is stored once, served by REQ, search and export, and reaches a live subscriber", async () => {
    const dir = newDir();
    const relay = await serve(dir);
    const reader = await RawClient.connect(relay.url);
    const publisher = await RawClient.connect(relay.url);
    const t0 = now();
    // A live subscription opened before the import: it must get every imported event.
    reader.send(["REQ", "live", { kinds: [1], since: t0 - 10_000 }]);
    await reader.next((f) => f[0] === "EOSE" && f[1] === "live");

    const importKey = newKey();
    const imported = Array.from({ length: 2500 }, (_, i) =>
      signed(importKey, {
        created_at: t0 - 5000 + (i % 4000),
        content: `bulkimportword note ${i}`,
        // Some expire (far ahead): the relay's expiry schedule must learn of them too.
        tags:
          i % 100 === 0
            ? [
                ["t", "imported"],
                ["expiration", String(t0 + 86_400)],
              ]
            : [["t", "imported"]],
      }),
    );
    const file = join(newDir(), "import.jsonl");
    writeFileSync(file, imported.map((e) => JSON.stringify(e)).join("\n"));
    const pubKey = newKey();
    const published = Array.from({ length: 200 }, (_, i) =>
      signed(pubKey, { created_at: t0 - i, content: `live note ${i}`, tags: [["t", "published"]] }),
    );

    // The import runs while a client publishes.
    const importing = cli(["import", file, "--data", dir, "--no-verify", "--quiet", "--json"]);
    const oks: unknown[][] = [];
    for (const e of published) oks.push(await publisher.publish(e));
    const done = await importing;
    expect(done.err).toBe("");
    expect(done.code).toBe(0);
    expect(JSON.parse(done.out)).toMatchObject({ accepted: imported.length, duplicate: 0, invalid: 0 });
    expect(oks.every((o) => o[2] === true)).toBe(true);

    const all = sorted([...imported, ...published].map((e) => e.id));
    // A new subscription id each time: a REQ that reuses an open one's id can receive, before
    // its EOSE, live events sent to the one it replaces (the relay may notice the import's
    // commits between two looks).
    let look = 0;
    const tagged = await eventually(
      () => reader.req(`tag${look++}`, { "#t": ["imported"], limit: 10_000 }),
      (ids) => ids.length >= imported.length,
    );
    // (what the relay logged, should it never see them: a failed follow of the import's commits)
    expect(tagged.length, relay.stderr() + relay.stdout()).toBe(imported.length);
    expect(sorted(tagged)).toEqual(sorted(imported.map((e) => e.id)));
    const every = await reader.req("all", { kinds: [1], limit: 10_000 });
    expect(every.length).toBe(all.length);
    expect(sorted(every)).toEqual(all);
    const byAuthor = await reader.req("author", { authors: [getPublicKey(importKey)], limit: 10_000 });
    expect(sorted(byAuthor)).toEqual(sorted(imported.map((e) => e.id)));
    const found = await reader.req("search", { search: "bulkimportword", limit: 10_000 });
    expect(sorted(found)).toEqual(sorted(imported.map((e) => e.id)));

    // The live subscriber got each event once: the imported ones and the published ones.
    const liveIds = () =>
      reader.frames.filter((f) => f[0] === "EVENT" && f[1] === "live").map((f) => (f[2] as Event).id);
    await eventually(
      async () => liveIds().length,
      (n) => n >= all.length,
    );
    expect(liveIds().length).toBe(all.length);
    expect(sorted(liveIds())).toEqual(all);

    // NIP-45 and /metrics count them once too.
    reader.send(["COUNT", "n", { "#t": ["imported"] }]);
    const count = await reader.next((f) => f[0] === "COUNT" && f[1] === "n");
    expect(count[2]).toMatchObject({ count: imported.length });
    const metrics = await (await fetch(`${relay.url.replace("ws://", "http://")}/metrics`)).text();
    expect(metrics).toContain(`relay_stored_events ${all.length}\n`);
    expect(metrics).toContain(`relay_expiring_events ${imported.length / 100}\n`);

    // An export beside the relay lists each event once.
    const exp = await cli(["export", "--data", dir, "--quiet"]);
    expect(exp.code).toBe(0);
    const ids = exportedIds(exp.out);
    expect(ids.length).toBe(all.length);
    expect(sorted(ids)).toEqual(all);

    reader.close();
    publisher.close();
    await stop(relay);
    // After a restart (the consumers caught up from disk) the answers are the same.
    const again = await serve(dir);
    const c = await RawClient.connect(again.url);
    expect(sorted(await c.req("again", { kinds: [1], limit: 10_000 }))).toEqual(all);
    c.close();
    await stop(again);
  }, 180_000);
});

describe("relay delete beside a running relay", () => {
  test("the running relay stops serving the deleted events, through every index", async () => {
    const dir = newDir();
    const relay = await serve(dir);
    const c = await RawClient.connect(relay.url);
    const sk = newKey();
    const t0 = now();
    const doomed = Array.from({ length: 30 }, (_, i) =>
      signed(sk, {
        created_at: t0 - i,
        content: `doomedword ${i}`,
        tags:
          i < 3
            ? [
                ["t", "doomed"],
                ["expiration", String(t0 + 86_400)],
              ]
            : [["t", "doomed"]],
      }),
    );
    const kept = Array.from({ length: 10 }, (_, i) =>
      signed(sk, { created_at: t0 - 100 - i, content: `kept ${i}`, tags: [["t", "kept"]] }),
    );
    for (const e of [...doomed, ...kept]) expect((await c.publish(e))[2]).toBe(true);
    // Applied to the indexes first, so the delete has index entries to take back.
    let look = 0;
    await eventually(
      () => c.req(`pre${look++}`, { "#t": ["doomed"], limit: 100 }),
      (ids) => ids.length === doomed.length,
    );

    const del = await cli(["delete", "--data", dir, "--filter", JSON.stringify({ "#t": ["doomed"] })]);
    expect(del.code).toBe(0);
    expect(sorted(del.out.trim().split("\n"))).toEqual(sorted(doomed.map((e) => e.id)));
    expect(del.err).toContain(`deleted ${doomed.length} events`);

    // The bodies are gone at once; what the relay keeps beside them (index key counts, the
    // expiry schedule) follows once it notices the delete's commits (it looks every 250 ms).
    let n = 0;
    const count = async () => {
      const id = `n${n++}`;
      c.send(["COUNT", id, { "#t": ["doomed"] }]);
      return (await c.next((f) => f[0] === "COUNT" && f[1] === id))[2] as { count: number };
    };
    expect(await eventually(count, (r) => r.count === 0)).toEqual({ count: 0 });
    expect(await c.req("tag", { "#t": ["doomed"], limit: 100 })).toEqual([]);
    expect(await c.req("ids", { ids: doomed.map((e) => e.id) })).toEqual([]);
    expect(sorted(await c.req("author", { authors: [getPublicKey(sk)], limit: 100 }))).toEqual(
      sorted(kept.map((e) => e.id)),
    );
    expect(await c.req("search", { search: "doomedword", limit: 100 })).toEqual([]);
    const metrics = await (await fetch(`${relay.url.replace("ws://", "http://")}/metrics`)).text();
    expect(metrics).toContain(`relay_stored_events ${kept.length}\n`);
    expect(metrics).toContain("relay_expiring_events 0\n");
    // Deleted by an operator, not by NIP-09: the same event may be published again.
    expect((await c.publish(doomed[0]!))[2]).toBe(true);
    expect(await c.req("back", { "#t": ["doomed"] })).toEqual([doomed[0]!.id]);
    c.close();
    await stop(relay);
  }, 120_000);
});

describe("serials", () => {
  test("deleting the newest event, restarting and publishing gives a new serial the tag index finds", async () => {
    const dir = newDir();
    const sk = newKey();
    const t0 = now();
    const a = signed(sk, { created_at: t0 - 2, tags: [["t", "first"]] });
    const b = signed(sk, { created_at: t0 - 1, tags: [["t", "newest"]] });
    const c = signed(sk, { created_at: t0, tags: [["t", "after"]] });
    const first = await serve(dir);
    const c1 = await RawClient.connect(first.url);
    for (const e of [a, b]) expect((await c1.publish(e))[2]).toBe(true);
    c1.close();
    await stop(first); // the consumers have applied both: their watermark is b's serial
    const del = await cli(["delete", "--data", dir, "--filter", JSON.stringify({ ids: [b.id] })]);
    expect(del.code).toBe(0);

    // The derived indexes apply nothing before the kill, so the restart replays from their
    // watermark: c must lie after it, not take b's serial again.
    const lazy = {
      RELAY_CONSUMERS_INTERVAL_MS: "600000",
      RELAY_CONSUMERS_MAX_BATCH: "1000000",
      RELAY_CONSUMERS_IDLE_MS: "0",
    };
    const second = await serve(dir, lazy);
    const c2 = await RawClient.connect(second.url);
    expect((await c2.publish(c))[2]).toBe(true);
    second.proc.kill("SIGKILL");
    await second.proc.exited;

    const third = await serve(dir);
    const c3 = await RawClient.connect(third.url);
    expect(await c3.req("tag", { "#t": ["after"] })).toEqual([c.id]);
    expect(sorted(await c3.req("all", { authors: [getPublicKey(sk)] }))).toEqual(sorted([a.id, c.id]));
    c3.close();
    await stop(third);
    const exp = await cli(["export", "--data", dir, "--quiet"]);
    expect(exportedIds(exp.out)).toEqual([a.id, c.id]);
  }, 120_000);
});

describe("one relay per data directory", () => {
  test("a second relay on the same directory is refused with the first one's pid; data commands are not", async () => {
    const dir = newDir();
    const first = await serve(dir);
    const second = await cli(["serve", "--port", "0", "--data", dir]);
    expect(second.code).toBe(1);
    const err = second.err;
    expect(err).toContain(`is in use by 'relay serve' (pid ${first.proc.pid})`);
    const stats = await cli(["stats", "--data", dir, "--json"]);
    expect(stats.code).toBe(0);
    // A rebuild of the indexes the relay keeps is refused, naming it.
    const reindex = await cli(["reindex", "--data", dir]);
    expect(reindex.code).toBe(1);
    expect(reindex.err).toContain(`'relay serve' (pid ${first.proc.pid}) is running on ${dir}`);
    await stop(first);
    // Once it is gone the directory is free again.
    expect((await cli(["reindex", "--data", dir, "--quiet"])).code).toBe(0);
  }, 60_000);

  test("an import running without a relay holds the directory: a relay started meanwhile is refused with its pid", async () => {
    const dir = newDir();
    const importing = spawnCli(["import", "-", "--data", dir, "--no-verify", "--quiet"], { stdin: "pipe" });
    const importer = importing.proc;
    const e = signed(newKey(), { content: "imported alone" });
    importer.stdin.write(`${JSON.stringify(e)}\n`);
    importer.stdin.flush();
    // The lock is taken before the import reads its first line; wait for it to name the import.
    const holder = await eventually(
      async () => {
        try {
          return JSON.parse(readFileSync(join(dir, "relay.lock"), "utf8")) as {
            pid: number;
            command: string;
          };
        } catch {
          return undefined;
        }
      },
      (h) => h?.pid === importer.pid,
    );
    expect(holder).toMatchObject({ pid: importer.pid, command: "import" });
    const refused = await cli(["serve", "--port", "0", "--data", dir]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`is in use by 'relay import' (pid ${importer.pid})`);
    importer.stdin.end();
    expect(await importing.exited()).toBe(0);
    const relay = await serve(dir);
    const c = await RawClient.connect(relay.url);
    expect(await c.req("all", {})).toEqual([e.id]);
    c.close();
    await stop(relay);
  }, 60_000);

  test("the lock of a relay killed with kill -9 does not keep the next one from starting", async () => {
    const dir = newDir();
    const first = await serve(dir);
    const lock = JSON.parse(readFileSync(join(dir, "relay.lock"), "utf8")) as { pid: number };
    expect(lock.pid).toBe(first.proc.pid);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    const second = await serve(dir);
    const c = await RawClient.connect(second.url);
    const e = signed(newKey(), { content: "after the kill" });
    expect((await c.publish(e))[2]).toBe(true);
    c.close();
    await stop(second);
  }, 60_000);
});
