// Copies that must be usable: `relay compact` and `relay backup` spawned as real processes on a
// store with free pages (replaced and deleted events), then a relay and the data commands
// writing to the copy: publish, a replaceable replacement, a NIP-09 deletion, a NIP-62 vanish,
// `relay delete`, `relay import`. And `relay check`: clean on source, copy and backup; finds
// damage injected into a stopped store and `--repair` fixes it.
import { describe, expect, test } from "bun:test";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { finalizeEvent, getPublicKey } from "nostr-tools/pure";
import type { NostrEvent } from "../src/nostr/event.ts";
import { putEntry, removeEntry } from "../src/store/index-db.ts";
import { readU64, serialKey } from "../src/store/keys.ts";
import { closeStore, indexEntries, openStore } from "../src/store/store.ts";
import { Gen } from "./gen.ts";
import { RawClient, tempDir } from "./harness.ts";
import { cliSync, serve, stop } from "./procs.ts";

const dir = (): string => tempDir("relay-backup-");
const relay = (args: string[], stdin?: string) => cliSync(args, { stdin });

const jsonl = (events: NostrEvent[]): string => events.map((e) => `${JSON.stringify(e)}\n`).join("");
const sign = (sk: Uint8Array, kind: number, created_at: number, tags: string[][] = [], content = "") =>
  finalizeEvent({ kind, created_at, tags, content }, sk) as NostrEvent;

/** Keys of the generated store; vanisher and removed are written to in the copies. */
const keys = Array.from({ length: 6 }, (_, i) => {
  const sk = new Uint8Array(32);
  sk[31] = i + 1;
  return { sk, pk: getPublicKey(sk) };
});
const [writer, vanisher, removed] = keys as [(typeof keys)[0], (typeof keys)[0], (typeof keys)[0]];
const T0 = 1_700_000_000;

/**
 * A store with free pages, as a relay that has run a while has: notes, reactions, profiles
 * replaced several times, addressable articles, then every reaction deleted. Returns its dir.
 */
function filledStore(): string {
  const g = new Gen(13);
  const events: NostrEvent[] = [];
  for (let i = 0; i < 3000; i++) {
    // Most events are the vanisher's and the removed author's, so that removing them frees
    // hundreds of pages in one transaction: what LMDB's compacting copy could not survive.
    const w = g.int(10);
    const k = w < 4 ? removed : w < 7 ? vanisher : g.pick(keys);
    const t = T0 + i;
    const r = g.int(10);
    if (r < 5) events.push(sign(k.sk, 1, t, [["p", g.pick(keys).pk]], `note ${i} ${"x".repeat(g.int(400))}`));
    else if (r < 8) events.push(sign(k.sk, 7, t, [["e", g.hex(64)]], "+"));
    else if (r < 9) events.push(sign(k.sk, 0, t, [], JSON.stringify({ name: `v${i}` })));
    else events.push(sign(k.sk, 30023, t, [["d", `a${g.int(5)}`]], `article ${i}`));
  }
  const d = dir();
  const imp = relay(["import", "-", "--no-verify", "--quiet", "--json", "--data", d], jsonl(events));
  expect(imp.code).toBe(0);
  const del = relay(["delete", "--filter", '{"kinds":[7]}', "--data", d]);
  expect(del.code).toBe(0);
  return d;
}

function check(data: string, ...more: string[]): { code: number; report: Record<string, unknown> } {
  const r = relay(["check", "--json", "--data", data, ...more]);
  if (r.code > 1) throw new Error(`check exited ${r.code}: ${r.err}`);
  return { code: r.code, report: JSON.parse(r.out) as Record<string, unknown> };
}

function exportIds(data: string, filter = "{}"): string[] {
  const r = relay(["export", "--quiet", "--filter", filter, "--data", data]);
  expect(r.code).toBe(0);
  return r.out === ""
    ? []
    : r.out
        .trimEnd()
        .split("\n")
        .map((l) => (JSON.parse(l) as NostrEvent).id);
}

async function okWithin(c: RawClient, e: NostrEvent): Promise<unknown[]> {
  const from = c.frames.length;
  c.send(["EVENT", e]);
  return c.next((f) => f[0] === "OK" && f[1] === e.id, 60_000, from);
}

/**
 * What an operator does with a restored copy: `relay delete` on it, a relay on it taking a
 * note, a replaceable replacement, a NIP-09 deletion and a NIP-62 vanish, then `relay import`;
 * every step's outcome is checked exactly, and `relay check` finds nothing after.
 */
async function exercise(data: string): Promise<void> {
  const before = exportIds(data);
  const vanisherHad = exportIds(data, JSON.stringify({ authors: [vanisher.pk] }));
  const removedHad = exportIds(data, JSON.stringify({ authors: [removed.pk] }));
  // The writer's profile, replaced by the two published below.
  const oldProfiles = new Set(exportIds(data, JSON.stringify({ kinds: [0], authors: [writer.pk] })));
  expect(oldProfiles.size).toBe(1);
  expect(vanisherHad.length).toBeGreaterThan(500);
  expect(removedHad.length).toBeGreaterThan(500);

  const t = T0 + 10_000;
  // `relay delete` first: as the first write to a copy made by LMDB's compacting copy it freed
  // hundreds of pages in one transaction and aborted in mdb_page_alloc().
  const del = relay(["delete", "--filter", JSON.stringify({ authors: [removed.pk] }), "--data", data]);
  // (the copy has no derived/ yet: delete builds it first and says so on stderr)
  expect([del.code, del.err.trim().split("\n").at(-1)]).toEqual([0, `deleted ${removedHad.length} events`]);
  const r = await serve(data);
  const c = await RawClient.connect(r.url);
  const note = sign(writer.sk, 1, t, [], "written to the copy");
  const v1 = sign(writer.sk, 0, t, [], '{"name":"one"}');
  const v2 = sign(writer.sk, 0, t + 1, [], '{"name":"two"}');
  const doomed = sign(writer.sk, 1, t + 2, [], "to be deleted");
  const deletion = sign(writer.sk, 5, t + 3, [["e", doomed.id]]);
  const vanish = sign(vanisher.sk, 62, t + 4, [["relay", "ALL_RELAYS"]]);
  for (const e of [note, v1, v2, doomed, deletion, vanish]) expect((await okWithin(c, e))[2]).toBe(true);
  expect(await c.req("profile", { kinds: [0], authors: [writer.pk] })).toEqual([v2.id]);
  expect(await c.req("gone", { ids: [doomed.id, note.id] })).toEqual([note.id]);
  expect(await c.req("vanished", { authors: [vanisher.pk] })).toEqual([vanish.id]);
  c.close();
  await stop(r);

  const fresh = Array.from({ length: 20 }, (_, i) => sign(removed.sk, 1, t + 10 + i, [], `again ${i}`));
  const imp = relay(["import", "-", "--no-verify", "--quiet", "--json", "--data", data], jsonl(fresh));
  expect(imp.code).toBe(0);
  expect(JSON.parse(imp.out).accepted).toBe(20);

  const gone = new Set([...vanisherHad, ...removedHad, doomed.id]);
  const want = new Set([
    ...before.filter((id) => !gone.has(id) && !oldProfiles.has(id)),
    note.id,
    v2.id,
    deletion.id,
    vanish.id,
    ...fresh.map((e) => e.id),
  ]);
  expect(new Set(exportIds(data))).toEqual(want);
  expect(check(data)).toMatchObject({ code: 0, report: { ok: true, problems: {} } });
}

describe("relay compact and relay backup make copies a relay can write to", () => {
  test("a compacted copy of a store with free pages takes writes, deletes, vanishes and imports", async () => {
    const src = filledStore();
    expect(check(src)).toMatchObject({ code: 0, report: { ok: true } });
    const dest = join(dir(), "compacted");
    const r = relay(["compact", dest, "--json", "--data", src]);
    expect([r.code, r.err]).toEqual([0, ""]);
    expect(JSON.parse(r.out)).toMatchObject({ ok: true, problems: [] });
    expect(exportIds(dest)).toEqual(exportIds(src));
    expect(check(dest)).toMatchObject({ code: 0, report: { ok: true } });
    await exercise(dest);
  }, 180_000);

  test("a backup taken while a relay serves and a client publishes is consistent and writable", async () => {
    const src = filledStore();
    const r = await serve(src);
    const c = await RawClient.connect(r.url);
    const acked: string[] = [];
    let publishing = true;
    const publisher = (async () => {
      for (let i = 0; publishing; i++) {
        const e = sign(writer.sk, 1, T0 + 5000 + i, [], `live ${i}`);
        if ((await okWithin(c, e))[2] === true) acked.push(e.id);
      }
    })();
    while (acked.length < 20) await Bun.sleep(10);
    const dest = join(dir(), "backup");
    const b = relay(["backup", dest, "--json", "--data", src]);
    // A read-only check beside the serving, writing relay: one snapshot, nothing reported.
    const live = check(src);
    expect([live.code, live.report.problems]).toEqual([0, {}]);
    publishing = false;
    await publisher;
    c.close();
    await stop(r);
    expect([b.code, b.err]).toEqual([0, ""]);
    expect(JSON.parse(b.out)).toMatchObject({ ok: true, problems: [] });

    // A snapshot: the notes acknowledged before the backup started are in it, and of the notes
    // published one after another it holds a prefix; the rest of the copy is the source's.
    const inCopy = new Set(exportIds(dest));
    const copied = acked.filter((id) => inCopy.has(id));
    expect(copied).toEqual(acked.slice(0, copied.length));
    expect(copied.length).toBeGreaterThanOrEqual(20);
    const inSource = new Set(exportIds(src));
    expect([...inCopy].filter((id) => !inSource.has(id))).toEqual([]);
    expect(new Set([...inSource].filter((id) => !acked.includes(id)))).toEqual(
      new Set([...inCopy].filter((id) => !acked.includes(id))),
    );
    expect(check(src)).toMatchObject({ code: 0, report: { ok: true } });
    expect(check(dest)).toMatchObject({ code: 0, report: { ok: true } });
    await exercise(dest);
  }, 180_000);
});

describe("relay check", () => {
  test("finds a removed index entry, an orphan entry and an event missing from ids; --repair fixes them", async () => {
    const d = filledStore();
    // Bring the derived indexes up to the log (a relay start does), then damage the stopped store.
    const r = await serve(d);
    await stop(r);
    const s = openStore(d);
    let victim: { serial: number; e: NostrEvent } | undefined;
    let lost: { serial: number; e: NostrEvent } | undefined;
    let gap: number | undefined;
    let expected = 1;
    for (const { key, value } of s.events.getRange({})) {
      const e = JSON.parse((value as Buffer).toString("utf8")) as NostrEvent;
      const serial = readU64(key as Buffer, 0);
      if (serial !== expected) gap ??= expected; // a deleted reaction's serial
      expected = serial + 1;
      if (!victim && e.kind === 1) victim = { serial, e };
      else if (victim && !lost && e.kind === 1) lost = { serial, e };
    }
    const [pubkeyDb, pubkeyEntry] = indexEntries(s, victim!.e, victim!.serial)[0]!;
    expect(pubkeyDb).toBe(s.pubkey);
    const orphan = Buffer.concat([Buffer.from([0, 1]), serialKey(T0), serialKey(gap!)]);
    await s.derived.transaction(() => {
      removeEntry(pubkeyDb, pubkeyEntry);
      putEntry(s.kind, orphan);
    });
    await s.env.transaction(() => s.ids.remove(Buffer.from(lost!.e.id, "hex")));
    await closeStore(s);

    const found = check(d);
    expect(found.code).toBe(1);
    expect(found.report.problems).toEqual({
      "ids: entry missing": { count: 1, examples: [`serial ${lost!.serial} id ${lost!.e.id}`] },
      "pubkey: entry missing": {
        count: 1,
        examples: [`serial ${victim!.serial} key ${pubkeyEntry.toString("hex").slice(0, 40)}…`],
      },
      "kind: entry without its event": {
        count: 1,
        examples: [`serial ${gap} key ${orphan.toString("hex")}`],
      },
    });
    const fixed = check(d, "--repair");
    expect(fixed).toMatchObject({ code: 0, report: { ok: true, problems: {}, fixed: 3 } });
    expect(check(d)).toMatchObject({ code: 0, report: { ok: true, problems: {} } });
    // The repaired store answers by id and by author again.
    const r2 = await serve(d);
    const c = await RawClient.connect(r2.url);
    expect(await c.req("id", { ids: [lost!.e.id] })).toEqual([lost!.e.id]);
    expect(
      await c.req("a", {
        authors: [victim!.e.pubkey],
        kinds: [1],
        until: victim!.e.created_at,
        since: victim!.e.created_at,
      }),
    ).toEqual([victim!.e.id]);
    c.close();
    await stop(r2);
  }, 180_000);

  test("rebuilds the REQ indexes when more than a tenth of the events lost their entries", async () => {
    const d = filledStore();
    const r = await serve(d);
    await stop(r);
    const s = openStore(d);
    const events = s.events.getKeysCount();
    await s.derived.transaction(() => s.time.clearSync());
    await closeStore(s);
    const found = check(d);
    expect(found.code).toBe(1);
    expect(Object.keys(found.report.problems as object)).toEqual(["time: entry missing"]);
    expect((found.report.problems as Record<string, { count: number }>)["time: entry missing"]!.count).toBe(
      events,
    );
    expect(check(d, "--repair")).toMatchObject({ code: 0, report: { ok: true, rebuilt: ["indexes"] } });
    expect(check(d)).toMatchObject({ code: 0, report: { ok: true, problems: {} } });
    expect(exportIds(d, JSON.stringify({ since: T0, until: T0 + 100 })).length).toBeGreaterThan(0);
  }, 180_000);

  test("finds events a NIP-09 tombstone or a NIP-62 request removed that are stored again; --repair takes them out", async () => {
    const d = filledStore();
    const r = await serve(d);
    const c = await RawClient.connect(r.url);
    const note = sign(writer.sk, 1, T0 + 40_000, [], "deleted, then put back behind the relay's back");
    const deletion = sign(writer.sk, 5, T0 + 40_001, [["e", note.id]]);
    const old = sign(vanisher.sk, 1, T0 + 40_002, [], "before the vanish");
    const vanish = sign(vanisher.sk, 62, T0 + 40_003, [["relay", "ALL_RELAYS"]]);
    // NIP-59: a gift wrap to the writer, deleted by the writer, its recipient.
    const wrap = sign(keys[5]!.sk, 1059, T0 + 40_004, [["p", writer.pk]], "sealed");
    const unwrap = sign(writer.sk, 5, T0 + 40_005, [["e", wrap.id]]);
    for (const e of [note, deletion, old, vanish, wrap, unwrap]) expect((await okWithin(c, e))[2]).toBe(true);
    c.close();
    await stop(r);
    // Put both back into the log directly, with new serials, as a bad restore or a bug could.
    const s = openStore(d);
    let serial = s.lastSerial;
    await s.env.transaction(() => {
      for (const e of [note, old, wrap]) {
        serial++;
        s.events.put(serialKey(serial), Buffer.from(JSON.stringify(e)));
        s.ids.put(Buffer.from(e.id, "hex"), serialKey(serial));
      }
    });
    await closeStore(s);
    const found = check(d);
    expect(found.code).toBe(1);
    expect(found.report.problems).toEqual({
      "deleted: event still stored": {
        count: 2,
        examples: [`id ${note.id}`, `id ${wrap.id}`].sort((a, b) =>
          Buffer.compare(Buffer.from(a.slice(3), "hex"), Buffer.from(b.slice(3), "hex")),
        ),
      },
      "vanished: event still stored": { count: 1, examples: [`serial ${serial - 1} id ${old.id}`] },
    });
    expect(check(d, "--repair")).toMatchObject({ code: 0, report: { ok: true, fixed: 3 } });
    expect(check(d)).toMatchObject({ code: 0, report: { ok: true, problems: {} } });
    expect(
      exportIds(
        d,
        JSON.stringify({ ids: [note.id, old.id, wrap.id, deletion.id, vanish.id, unwrap.id] }),
      ).sort(),
    ).toEqual([deletion.id, vanish.id, unwrap.id].sort());
  }, 180_000);

  test("finds derived indexes of another log (a data.mdb restored under a newer derived/) and rebuilds them", async () => {
    const d = filledStore();
    const dest = join(dir(), "old");
    expect(relay(["backup", dest, "--data", d]).code).toBe(0);
    const more = Array.from({ length: 30 }, (_, i) => sign(writer.sk, 1, T0 + 20_000 + i, [], `later ${i}`));
    expect(relay(["import", "-", "--no-verify", "--quiet", "--data", d], jsonl(more)).code).toBe(0);
    const last = (data: string) => (check(data).report as { lastSerial: number }).lastSerial;
    const [oldLast, newLast] = [last(dest), last(d)];
    expect(newLast).toBe(oldLast + 30);
    cpSync(join(d, "derived"), join(dest, "derived"), { recursive: true });
    const found = check(dest);
    expect(found.code).toBe(1);
    expect(found.report.problems).toEqual({
      "consumers: watermark beyond the last serial": {
        count: 4,
        examples: ["counters", "hll", "indexes", "search"].map(
          (n) => `${n} at ${newLast}, last serial ${oldLast}`,
        ),
      },
    });
    expect(check(dest, "--repair")).toMatchObject({
      code: 0,
      report: { ok: true, rebuilt: ["counters", "hll", "indexes", "search"] },
    });
    expect(check(dest)).toMatchObject({ code: 0, report: { ok: true, problems: {} } });
    const r = await serve(dest);
    const c = await RawClient.connect(r.url);
    const after = sign(writer.sk, 1, T0 + 30_000, [], "after the restore");
    expect((await okWithin(c, after))[2]).toBe(true);
    expect(await c.req("later", { authors: [writer.pk], since: T0 + 20_000 })).toEqual([after.id]);
    c.close();
    await stop(r);
  }, 180_000);

  test("a relay started on a data.mdb restored under a newer derived/ rebuilds it and finds what it stores next", async () => {
    const d = filledStore();
    const dest = join(dir(), "old");
    expect(relay(["backup", dest, "--data", d]).code).toBe(0);
    const more = Array.from({ length: 30 }, (_, i) =>
      sign(writer.sk, 1, T0 + 20_000 + i, [["t", "later"]], `later ${i}`),
    );
    expect(relay(["import", "-", "--no-verify", "--quiet", "--data", d], jsonl(more)).code).toBe(0);
    cpSync(join(d, "derived"), join(dest, "derived"), { recursive: true });
    // No check first: the relay itself must not trust watermarks past its log.
    const r = await serve(dest);
    const c = await RawClient.connect(r.url);
    const after = sign(writer.sk, 1, T0 + 30_000, [["t", "later"]], "after the restore");
    expect((await okWithin(c, after))[2]).toBe(true);
    expect(await c.req("tag", { "#t": ["later"] })).toEqual([after.id]);
    expect(await c.req("later", { authors: [writer.pk], since: T0 + 20_000 })).toEqual([after.id]);
    c.close();
    await stop(r);
    expect(check(dest)).toMatchObject({ code: 0, report: { ok: true, problems: {} } });
  }, 180_000);

  test("a serial is never handed out again after the newest events are deleted", () => {
    const d = dir();
    const first = Array.from({ length: 10 }, (_, i) => sign(writer.sk, 1, T0 + i, [], `n ${i}`));
    expect(relay(["import", "-", "--no-verify", "--quiet", "--data", d], jsonl(first)).code).toBe(0);
    const newest = first.slice(-3).map((e) => e.id);
    expect(relay(["delete", "--filter", JSON.stringify({ ids: newest }), "--data", d]).code).toBe(0);
    const next = sign(writer.sk, 1, T0 + 100, [], "next");
    expect(relay(["import", "-", "--no-verify", "--quiet", "--data", d], jsonl([next])).code).toBe(0);
    const s = openStore(d);
    try {
      expect(readU64(s.ids.get(Buffer.from(next.id, "hex"))!, 0)).toBe(11);
    } finally {
      void closeStore(s);
    }
    expect(check(d)).toMatchObject({ code: 0, report: { ok: true, lastSerial: 11 } });
  });

  test("exits 2 on a bad option and 1 on a directory without data", () => {
    expect(relay(["check", "--bogus"]).code).toBe(2);
    const none = join(dir(), "none");
    const r = relay(["check", "--data", none]);
    expect([r.code, r.err.trim()]).toEqual([1, `relay check: no relay data in ${none} (no data.mdb)`]);
  });
});
