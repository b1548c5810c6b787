// The log's commits are published (to live subscribers and REQ watermarks) once visible to
// readers, ahead of the sync lmdb-js waits for before it resolves them (visible.ts). What must
// hold: the hook is in place for the lmdb-js this relay ships, it reports commits before they
// resolve, and a read then sees them (the writer's side: writer.test.ts).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { visibilityOf } from "../../src/lmdb/visible.ts";
import { closeStore, openStore } from "../../src/store/store.ts";

const dir = mkdtempSync(join(tmpdir(), "visible-"));
const store = openStore(dir);
afterAll(async () => {
  await closeStore(store);
  rmSync(dir, { recursive: true, force: true });
});

test("lmdb-js reports commits of the log visible before they resolve, and a read then sees them", async () => {
  const v = visibilityOf(store.env);
  // An lmdb-js without the call would publish on resolution again: this names the change.
  expect(v.hooked).toBe(true);
  expect(visibilityOf(store.env)).toBe(v);
  const key = Buffer.from("visible-test");
  const value = (i: number) => Buffer.from([i]);
  let early = 0;
  for (let i = 0; i < 50; i++) {
    let seen: Buffer | undefined;
    let resolved = false;
    const done = store.env.transaction(() => {
      store.meta.put(key, value(i));
      v.whenVisible(
        () => {
          if (!resolved) early++;
          seen = store.meta.get(key);
        },
        () => store.meta.get(key)?.equals(value(i)) === true,
      );
    });
    await done.then(() => (resolved = true));
    // Run or not (the report may come after the resolution), it never runs before a read
    // sees the commit.
    if (seen !== undefined) expect(seen).toEqual(value(i));
  }
  // The report reaches JavaScript first nearly always (49-50 of 50 here); none at all would
  // mean the hook is dead.
  expect(early).toBeGreaterThan(0);
});

test("a watch ended with its commit reads nothing at another transaction's report", async () => {
  const v = visibilityOf(store.env);
  const key = Buffer.from("visible-ended");
  let checked = 0;
  let ran = 0;
  let unwatch = (): void => {};
  await store.env.transaction(() => {
    store.meta.put(key, Buffer.from([1]));
    // Never seen to hold, so the watch outlives its commit unless it is ended (as when the
    // report comes after the resolution).
    unwatch = v.whenVisible(
      () => ran++,
      () => {
        checked++;
        return false;
      },
    );
  });
  unwatch();
  const c = checked;
  // Another transaction on the log (the consumers trim the removal log so): its report finds
  // no watch, so it neither reads (as when it comes while the store closes) nor publishes.
  for (let i = 0; i < 5; i++) await store.env.transaction(() => store.meta.put(key, Buffer.from([2 + i])));
  expect(checked).toBe(c);
  expect(ran).toBe(0);
});
