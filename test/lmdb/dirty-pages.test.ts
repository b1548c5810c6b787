import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { releaseDirtyPages } from "../../src/lmdb/dirty-pages.ts";
import { closeStore, DERIVED_DIR, openStore } from "../../src/store/store.ts";

const dir = mkdtempSync(join(tmpdir(), "relay-dirty-"));
const store = openStore(dir, { mapSizeGb: 4 });
const envs = [
  { env: store.env, dir },
  { env: store.derived, dir: join(dir, DERIVED_DIR) },
];
const db = store.derived.openDB({ name: "scratch", keyEncoding: "binary", encoding: "binary" });

afterAll(async () => {
  await closeStore(store);
  rmSync(dir, { recursive: true, force: true });
});

const rssAnonBytes = (): number =>
  Number(/RssAnon:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) * 1024;

/** One transaction that changes pages all over a tree: random 16-byte keys. */
function bigWrite(n: number, seed: number): void {
  store.derived.transactionSync(() => {
    for (let i = 0; i < n; i++) {
      const k = Buffer.alloc(16);
      k.writeUInt32BE((Math.imul(i + 1, 2654435761) ^ seed) >>> 0, 0);
      k.writeUInt32BE(i, 4);
      db.put(k, Buffer.alloc(24, i));
    }
  });
}

test.if(process.platform === "linux")(
  "the pages a large write transaction changed are freed once, the memory goes back to the kernel, and the environments keep working",
  () => {
    bigWrite(150_000, 1);
    bigWrite(150_000, 2);
    const before = rssAnonBytes();
    const r = releaseDirtyPages(envs);
    const after = rssAnonBytes();
    expect(r).not.toBeNull();
    // the second transaction rewrote most of the tree's leaves: thousands of pages kept
    expect(r!.pages).toBeGreaterThan(2000);
    expect(r!.bytes).toBe(r!.pages * 4096);
    expect(before - after).toBeGreaterThan(r!.bytes / 4);
    // the list was emptied: nothing is left to free, and nothing is freed twice
    expect(releaseDirtyPages(envs)).toEqual({ pages: 0, bytes: 0 });
    // the next transactions allocate their pages again, and every write is there
    bigWrite(150_000, 3);
    store.env.transactionSync(() => store.meta.put(Buffer.from("k"), Buffer.from("v")));
    expect(db.getKeysCount()).toBe(450_000);
    expect(store.meta.get(Buffer.from("k"))?.toString()).toBe("v");
    expect(releaseDirtyPages(envs)!.pages).toBeGreaterThan(2000);
  },
);

test.if(process.platform === "linux")("an environment that is not open in this process is left alone", () => {
  expect(releaseDirtyPages([{ env: store.derived, dir: tmpdir() }])).toBeNull();
  expect(releaseDirtyPages([{ env: store.derived, dir: join(dir, "missing") }])).toBeNull();
});
