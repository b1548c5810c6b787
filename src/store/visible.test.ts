// The log's commits are published (to live subscribers and REQ watermarks) once visible to
// readers, ahead of the sync lmdb-js waits for before it resolves them (visible.ts). What must
// hold: the hook is in place for the lmdb-js this relay ships, it reports commits before they
// resolve, and a read then sees them (the writer's side: writer.test.ts).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeStore, openStore } from "./store.ts";
import { visibilityOf } from "./visible.ts";

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
