// The REQ indexes' entries as LMDB duplicates (index-db.ts), on a real LMDB in a temp dir: scans
// in either order, in chunks, between since and until, counts and lookups give exactly what a
// model of the entries holds.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Gen } from "../../test/gen.ts";
import { allEntries, countEntries, hasEntry, putEntry, removeEntry } from "../store/index-db.ts";
import { indexKey, keySerial, keyTime, tagPrefix } from "../store/keys.ts";
import { closeStore, openStore } from "../store/store.ts";
import { MergedScan } from "./cursor.ts";

const dir = mkdtempSync(join(tmpdir(), "index-db-"));
const s = openStore(dir);
afterAll(async () => {
  await closeStore(s);
  rmSync(dir, { recursive: true, force: true });
});

const g = new Gen(0x1d8db);
const prefixes = ["nostr", "bitcoin", "a", "zap"].map((v) => tagPrefix("t", v)!);
const times = [0, 1, 5, 255, 256, 1_700_000_000, 1_700_000_001, 2 ** 32, Number.MAX_SAFE_INTEGER];
type Entry = { p: number; t: number; serial: number };
const model: Entry[] = [];
for (let serial = 1; serial <= 3000; serial++)
  model.push({
    p: g.int(prefixes.length),
    t: g.int(3) === 0 ? g.pick(times) : 1_700_000_000 + g.int(500),
    serial,
  });
const keyOf = (e: Entry) => indexKey(prefixes[e.p]!, e.t, e.serial);
s.derived.transactionSync(() => {
  for (const e of model) putEntry(s.tag, keyOf(e));
  // A second put of the same entry changes nothing.
  putEntry(s.tag, keyOf(model[0]!));
});

const newestFirst = (a: Entry, b: Entry) => b.t - a.t || b.serial - a.serial;

test("scans give exactly the entries of their prefixes between since and until, in order, in any chunk size", () => {
  for (let i = 0; i < 300; i++) {
    const ps = [...new Set(Array.from({ length: 1 + g.int(3) }, () => g.int(prefixes.length)))];
    const since = g.int(3) === 0 ? g.pick(times) : 1_700_000_000 + g.int(500);
    const until = g.int(4) === 0 ? since : g.int(3) === 0 ? g.pick(times) : 1_700_000_000 + g.int(500);
    const order = g.int(2) === 0 ? "newest" : "oldest";
    const want = model
      .filter((e) => ps.includes(e.p) && e.t >= since && e.t <= until)
      .sort(newestFirst)
      .map((e) => `${e.t}/${e.serial}`);
    if (order === "oldest") want.reverse();
    const scan = new MergedScan(
      s.tag,
      ps.map((p) => prefixes[p]!),
      since,
      until,
      1 + g.int(300),
      order,
    );
    const got: string[] = [];
    for (let k = scan.next(); k; k = scan.next()) got.push(`${k.time}/${k.serial}`);
    expect(got).toEqual(want);
    const counted = ps.reduce((n, p) => n + countEntries(s.tag, prefixes[p]!, since, until), 0);
    expect(counted).toBe(want.length);
  }
});

test("an entry is found, listed and removed as a whole key", () => {
  const all = [...allEntries(s.tag)].map((k) => `${keyTime(k)}/${keySerial(k)}`);
  expect(all.length).toBe(model.length);
  expect(new Set(all)).toEqual(new Set(model.map((e) => `${e.t}/${e.serial}`)));
  const victim = model[17]!;
  expect(hasEntry(s.tag, keyOf(victim))).toBe(true);
  expect(hasEntry(s.tag, indexKey(prefixes[victim.p]!, victim.t, victim.serial + 100_000))).toBe(false);
  s.derived.transactionSync(() => removeEntry(s.tag, keyOf(victim)));
  expect(hasEntry(s.tag, keyOf(victim))).toBe(false);
  expect([...allEntries(s.tag)].length).toBe(model.length - 1);
});
