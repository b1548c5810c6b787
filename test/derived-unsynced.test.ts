// The relay's derived indexes are written without syncing (src/lmdb/unsynced.ts). A process that
// dies loses none of their pages, so the next start keeps them; a machine that went down in the
// middle of such writes may have torn them, so the next opening removes them and the consumers
// rebuild them from the log. A clean stop syncs them and says so.
import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getPublicKey } from "nostr-tools/pure";
import { bootId, UNSYNCED_FILE } from "../src/lmdb/unsynced.ts";
import { currentHighWater } from "../src/store/serials.ts";
import { closeStore, DERIVED_DIR, openStore } from "../src/store/store.ts";
import { newKey, RawClient, signed, tempDir } from "./harness.ts";
import { metric, type Served, serve, stop, until } from "./procs.ts";

const boot = bootId();
const marker = (dir: string) => join(dir, DERIVED_DIR, UNSYNCED_FILE);

/** Publishes `n` notes with the word "torn" and waits until every index has applied them. */
async function fill(relay: Served, n: number): Promise<{ ids: string[]; pubkey: string }> {
  const sk = newKey();
  const c = await RawClient.connect(relay.url);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const e = signed(sk, { content: `torn page ${i}`, created_at: 1_700_000_000 + i });
    expect((await c.publish(e))[2]).toBe(true);
    ids.push(e.id);
  }
  c.close();
  await until(
    "the consumers caught up",
    async () => (await metric(relay.url, 'relay_consumer_lag_events{consumer="indexes"}')) === 0,
  );
  return { ids, pubkey: getPublicKey(sk) };
}

/** A database of our own in the derived environment, to tell whether it is the same one later. */
async function plant(dir: string): Promise<void> {
  const s = openStore(dir);
  await s.derived
    .openDB({ name: "planted", keyEncoding: "binary", encoding: "binary" })
    .put(Buffer.from("k"), Buffer.from("v"));
  await closeStore(s);
}

async function planted(dir: string): Promise<boolean> {
  const s = openStore(dir);
  const names = new Set(Array.from(s.derived.getKeys({}), String));
  await closeStore(s);
  return names.has("planted");
}

test.skipIf(boot === undefined)(
  "a running relay marks its derived indexes unsynced in this boot; a clean stop syncs them and removes the mark",
  async () => {
    const dir = tempDir("unsynced-");
    const relay = await serve(dir);
    expect(readFileSync(marker(dir), "utf8").trim()).toBe(boot!);
    await fill(relay, 3);
    await stop(relay);
    expect(existsSync(marker(dir))).toBe(false);
  },
);

test.skipIf(boot === undefined)(
  "after a process dies, the next start keeps the derived indexes and serves everything",
  async () => {
    const dir = tempDir("unsynced-kill-");
    const relay = await serve(dir);
    const { ids, pubkey } = await fill(relay, 20);
    relay.proc.kill("SIGKILL");
    await relay.exited();
    expect(readFileSync(marker(dir), "utf8").trim()).toBe(boot!);
    await plant(dir);
    const again = await serve(dir);
    try {
      const c = await RawClient.connect(again.url);
      expect(new Set(await c.req("a", { authors: [pubkey] }))).toEqual(new Set(ids));
      c.close();
    } finally {
      await stop(again);
    }
    expect(await planted(dir)).toBe(true);
    expect(again.stdout() + again.stderr()).not.toContain("rebuilt from the log");
  },
);

test.skipIf(boot === undefined)(
  "after the machine went down mid-write, the next opening removes the derived indexes and they are rebuilt from the log",
  async () => {
    const dir = tempDir("unsynced-torn-");
    const relay = await serve(dir);
    const { ids, pubkey } = await fill(relay, 20);
    relay.proc.kill("SIGKILL");
    await relay.exited();
    await plant(dir);
    writeFileSync(marker(dir), "a-boot-before-this-one\n");
    const again = await serve(dir);
    try {
      expect(again.stdout() + again.stderr()).toContain("rebuilt from the log");
      const c = await RawClient.connect(again.url);
      expect(new Set(await c.req("a", { authors: [pubkey] }))).toEqual(new Set(ids));
      expect(new Set(await c.req("s", { search: "torn", authors: [pubkey], limit: 100 }))).toEqual(
        new Set(ids),
      );
      c.send(["COUNT", "n", { authors: [pubkey] }]);
      expect(((await c.next((f) => f[0] === "COUNT"))[2] as { count: number }).count).toBe(ids.length);
      c.close();
      const s = openStore(dir);
      const high = currentHighWater(s).serial;
      await closeStore(s);
      for (const name of ["indexes", "search", "counters", "hll"])
        expect(await metric(again.url, `relay_consumer_watermark{consumer="${name}"}`)).toBe(high);
    } finally {
      await stop(again);
    }
    expect(await planted(dir)).toBe(false);
  },
);
