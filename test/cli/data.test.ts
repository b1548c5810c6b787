// The data commands as operators run them: `relay import`, `export`, `stats`, `compact` and
// `delete` spawned as real processes on temporary data directories, checked against the strfry
// fixture (../shared/fixtures beside the repository) and against generated events.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { finalizeEvent, getPublicKey } from "nostr-tools/pure";
import type { Summary as ImportSummary } from "../../src/cli/data/import.ts";
import { storedJson } from "../../src/nostr/canonical.ts";
import type { NostrEvent } from "../../src/nostr/event.ts";
import { isAddressable, isReplaceable } from "../../src/nostr/kinds.ts";
import { hasEntry } from "../../src/store/index-db.ts";
import { readU64, replaceableKey, serialKey, tagPrefix } from "../../src/store/keys.ts";
import { closeStore, indexEntries, openStore } from "../../src/store/store.ts";
import { RawClient, startTestRelay, tempDir } from "../harness.ts";
import { cliSync } from "../procs.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const FIXTURE = new URL("../../../shared/fixtures/strfry-export-2896.jsonl", import.meta.url).pathname;
const HAVE_FIXTURE = existsSync(FIXTURE);

const withFixture = (name: string): string =>
  HAVE_FIXTURE ? name : `${name} [SKIPPED: fixture not found at ${FIXTURE}]`;

const dir = (): string => tempDir("relay-cli-data-");
const relay = (args: string[], stdin?: string) => cliSync(args, { stdin });

function importJson(args: string[], stdin?: string): ImportSummary {
  const r = relay(["import", "--json", ...args], stdin);
  if (r.code !== 0) throw new Error(`import exited ${r.code}: ${r.err}`);
  return JSON.parse(r.out) as ImportSummary;
}

function exportLines(data: string, ...args: string[]): string[] {
  const r = relay(["export", "--quiet", "--data", data, ...args]);
  if (r.code !== 0) throw new Error(`export exited ${r.code}: ${r.err}`);
  return r.out === "" ? [] : r.out.slice(0, -1).split("\n");
}

const idsOf = (lines: string[]): string[] => lines.map((l) => (JSON.parse(l) as NostrEvent).id);
const jsonl = (events: NostrEvent[]): string => events.map((e) => `${JSON.stringify(e)}\n`).join("");

/** Oldest first as the export orders: created_at, then arrival (file) order. */
const oldestFirst = (events: NostrEvent[]): NostrEvent[] =>
  events
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.created_at - b.e.created_at || a.i - b.i)
    .map((x) => x.e);

// --- generated events -------------------------------------------------------------------------

const sk = (i: number): Uint8Array => new Bun.CryptoHasher("sha256").update(`cli-data key ${i}`).digest();
const pk = (i: number): string => getPublicKey(sk(i));
const BASE = 1_700_000_000;

function sign(i: number, t: { kind: number; created_at: number; tags?: string[][]; content?: string }) {
  const e = finalizeEvent({ tags: [], content: "", ...t }, sk(i));
  const { id, pubkey, created_at, kind, tags, content, sig } = e;
  return { id, pubkey, created_at, kind, tags, content, sig } as NostrEvent;
}

/** 80 events from 5 authors: notes, reactions, articles, profiles; created_at ties; odd content. */
const GENERATED: NostrEvent[] = (() => {
  const out: NostrEvent[] = [];
  for (let a = 0; a < 5; a++)
    out.push(sign(a, { kind: 0, created_at: BASE + a, content: `{"name":"user ${a}"}` }));
  for (let i = 0; i < 75; i++) {
    const kind = [1, 7, 1, 30023, 1][i % 5]!;
    const tags = [["t", i % 3 === 0 ? "alpha" : "beta"]];
    if (i % 4 === 0) tags.push(["p", pk((i + 1) % 5)]);
    if (i % 10 === 0) tags.push(["e", "ab".repeat(32), "wss://relay.example"]);
    if (kind === 30023) tags.push(["d", `doc-${i}`]);
    if (i === 7) tags.push(["r", "x".repeat(300)]); // too long to index; still stored verbatim
    const content = i % 6 === 0 ? `tab\t newline\n "q" \\ é 日本 \u2028 ${i}` : `note ${i}`;
    // pairs share created_at so ties must keep arrival order
    out.push(sign(i % 5, { kind, created_at: BASE + 10 + Math.floor(i / 2), tags, content }));
  }
  return out;
})();

function generatedRelay(d = dir()): string {
  const s = importJson(["--data", d], jsonl(GENERATED));
  expect(s.accepted).toBe(GENERATED.length);
  return d;
}

// --- fixture ----------------------------------------------------------------------------------

const FIXTURE_LINES: string[] = HAVE_FIXTURE ? readFileSync(FIXTURE, "utf8").trimEnd().split("\n") : [];
const FIXTURE_EVENTS: NostrEvent[] = FIXTURE_LINES.map((l) => JSON.parse(l) as NostrEvent);
// Made here, not in the first test that fills it, so that it outlives that test.
const fixtureData = dir();
let fixtureFilled = false;
/** One relay with the fixture imported (with signature checks), shared by the read-only tests. */
function fixtureRelay(): string {
  if (fixtureFilled) return fixtureData;
  const s = importJson([FIXTURE, "--data", fixtureData]);
  expect(s).toMatchObject({ lines: 2896, accepted: 2896, duplicate: 0, older: 0, invalid: 0, problems: [] });
  fixtureFilled = true;
  return fixtureData;
}

describe("relay import of the strfry fixture", () => {
  test.skipIf(!HAVE_FIXTURE)(
    withFixture("all 2896 events are accepted and export back in canonical form, oldest first"),
    () => {
      const d = fixtureRelay();
      const out = exportLines(d);
      // strfry writes keys alphabetically; the relay stores and exports its canonical key order.
      expect(out).toEqual(FIXTURE_EVENTS.map(storedJson));
      expect(out.map((l) => JSON.parse(l))).toEqual(FIXTURE_EVENTS);
    },
    60_000,
  );

  test.skipIf(!HAVE_FIXTURE)(
    withFixture(
      "import → export → import into an empty relay → export is byte-identical; re-import is all duplicates",
    ),
    () => {
      const first = relay(["export", "--quiet", "--data", fixtureRelay()]).out;
      const file = join(dir(), "export.jsonl");
      writeFileSync(file, first);
      const d2 = dir();
      expect(importJson([file, "--data", d2, "--no-verify"])).toMatchObject({ accepted: 2896, invalid: 0 });
      const second = relay(["export", "--quiet", "--data", d2]).out;
      expect(second.length).toBe(first.length);
      expect(second === first).toBe(true);
      expect(importJson([file, "--data", d2, "--no-verify"])).toMatchObject({ accepted: 0, duplicate: 2896 });
    },
    60_000,
  );

  test.skipIf(!HAVE_FIXTURE)(
    withFixture("stats: totals, kinds, time span and per-database counts match the fixture"),
    () => {
      const d = fixtureRelay();
      const r = relay(["stats", "--json", "--data", d]);
      expect(r.code).toBe(0);
      const s = JSON.parse(r.out);
      const kinds: Record<string, number> = {};
      for (const e of FIXTURE_EVENTS) kinds[e.kind] = (kinds[e.kind] ?? 0) + 1;
      const times = FIXTURE_EVENTS.map((e) => e.created_at);
      let tagEntries = 0;
      for (const e of FIXTURE_EVENTS) {
        const seen = new Set<string>();
        for (const [name, value] of e.tags)
          if (name?.length === 1 && /[a-zA-Z]/.test(name) && value !== undefined && tagPrefix(name, value))
            seen.add(`${name}\u0000${value}`);
        tagEntries += seen.size;
      }
      const addressed = FIXTURE_EVENTS.filter((e) => isReplaceable(e.kind) || isAddressable(e.kind)).length;
      expect(s.events).toBe(2896);
      expect(s.kinds).toEqual(kinds);
      expect(s.kinds).toEqual({ "0": 110, "1": 1677, "3": 110, "6": 228, "7": 601, "30023": 170 });
      expect([s.oldest, s.newest]).toEqual([Math.min(...times), Math.max(...times)]);
      for (const db of ["events", "ids"]) expect([db, s.databases[db].entries]).toEqual([db, 2896]);
      for (const db of ["ix_time", "ix_pubkey", "ix_kind", "ix_pubkind"])
        expect([db, s.derived[db].entries]).toEqual([db, 2896]);
      expect(s.derived.ix_tag.entries).toBe(tagEntries);
      expect(s.databases.replaceable.entries).toBe(addressed);
      expect(s.databases.events.bytes).toBeGreaterThan(2_000_000);
      expect(s.file.bytes).toBe(statSync(join(d, "data.mdb")).size);
      // the walk of both files: each page is a database's, LMDB's own or free
      type Db = { pages: { branch: number; leaf: number; overflow: number }; space: { pages: number } };
      const lmdbPages = (db: Db) => db.pages.branch + db.pages.leaf + db.pages.overflow;
      for (const [f, dbs] of [
        [s.space.log, s.databases],
        [s.space.derived, s.derived],
      ] as [
        {
          complete: boolean;
          pages: number;
          pageSize: number;
          bytes: number;
          lmdb: { pages: number };
          free: { pages: number; unlisted: number };
        },
        Record<string, Db>,
      ][]) {
        expect([f.complete, f.free.unlisted]).toEqual([true, 0]);
        const inDbs = Object.values(dbs).reduce((a, db) => a + db.space.pages, 0);
        expect(inDbs + f.lmdb.pages + f.free.pages).toBe(f.pages);
        expect(f.bytes).toBe(f.pages * f.pageSize);
      }
      expect(s.space.log.bytes).toBe(s.file.bytes);
      expect(s.space.derived.bytes).toBe(statSync(join(d, "derived", "data.mdb")).size);
      // plain databases: the walk agrees with LMDB's statistics; DUPSORT ones: it adds the sub-databases
      for (const db of ["events", "ids", "replaceable"])
        expect([db, s.databases[db].space.pages]).toEqual([db, lmdbPages(s.databases[db])]);
      for (const db of ["ix_time", "ix_pubkey", "ix_kind", "ix_pubkind", "ix_tag"])
        expect(s.derived[db].space.pages).toBeGreaterThanOrEqual(lmdbPages(s.derived[db]));
      // ix_time: one key, 2,896 values of 16 bytes, at least 12 pages of them; LMDB's statistics: 1 page
      expect(lmdbPages(s.derived.ix_time)).toBe(1);
      expect(s.derived.ix_time.space.pages).toBeGreaterThanOrEqual(Math.ceil((2896 * 16) / 4072));
      const roles = Object.values(s.roles as Record<string, { bytes: number }>).reduce(
        (a, r) => a + r.bytes,
        0,
      );
      expect(roles).toBe(s.space.log.bytes + s.space.derived.bytes);
      expect(s.roles.bodies.bytes).toBe(s.databases.events.space.pages * s.space.log.pageSize);
      const text = relay(["stats", "--data", d]).out;
      expect(text).toContain("events    2,896");
      expect(text).toMatch(/\n1 +1,677\n/);
      expect(text).toMatch(/\nfree +[\d,]+ +[\d.]+ [KM]iB +[\d.]+%\n/);
      expect(text).toMatch(/\nevent bodies +[\d.]+ MiB +[\d.]+%\n/);
    },
    60_000,
  );

  test.skipIf(!HAVE_FIXTURE)(
    withFixture("compact writes a smaller copy that opens with the same counts and exports the same bytes"),
    () => {
      const d = fixtureRelay();
      const dest = join(dir(), "backup");
      const r = relay(["compact", dest, "--json", "--data", d]);
      expect(r.code).toBe(0);
      const c = JSON.parse(r.out);
      expect(c).toMatchObject({ ok: true, problems: [] });
      expect(c.copyBytes).toBeLessThanOrEqual(c.sourceBytes);
      const a = JSON.parse(relay(["stats", "--json", "--data", d]).out);
      const b = JSON.parse(relay(["stats", "--json", "--data", dest]).out);
      for (const k of ["events", "kinds", "oldest", "newest"]) expect(b[k]).toEqual(a[k]);
      for (const [name, db] of Object.entries(a.databases))
        expect([name, b.databases[name]?.entries]).toEqual([name, (db as { entries: number }).entries]);
      expect(
        relay(["export", "--quiet", "--data", dest]).out === relay(["export", "--quiet", "--data", d]).out,
      ).toBe(true);
      // never over an existing copy, never onto the data directory itself
      const again = relay(["compact", dest, "--data", d]);
      expect(again.code).toBe(1);
      expect(again.err).toContain("already holds a data.mdb");
      expect(relay(["compact", d, "--data", d]).code).toBe(2);
    },
    60_000,
  );
});

describe("relay import of generated and broken input", () => {
  test("generated events round-trip byte for byte, ties on created_at kept in arrival order", () => {
    const d = generatedRelay();
    const first = exportLines(d);
    expect(first).toEqual(oldestFirst(GENERATED).map(storedJson));
    const d2 = dir();
    importJson(["--data", d2], `${first.join("\n")}\n`);
    expect(exportLines(d2)).toEqual(first);
  });

  test("bad lines are reported by line number and never stop the good ones", () => {
    const [a, b, c, d, eph] = [
      sign(0, { kind: 1, created_at: BASE + 1, content: "a" }),
      sign(1, { kind: 1, created_at: BASE + 2, content: "b" }),
      sign(2, { kind: 1, created_at: BASE + 3, content: "c" }),
      sign(3, { kind: 1, created_at: BASE + 4, content: "d" }),
      sign(4, { kind: 20001, created_at: BASE + 5, content: "ephemeral" }),
    ] as [NostrEvent, NostrEvent, NostrEvent, NostrEvent, NostrEvent];
    const badId = { ...sign(0, { kind: 1, created_at: BASE + 6, content: "signed" }), content: "tampered" };
    const good = sign(1, { kind: 1, created_at: BASE + 7, content: "sig donor" });
    const badSig = { ...sign(2, { kind: 1, created_at: BASE + 8, content: "x" }), sig: good.sig };
    const lines = [
      JSON.stringify(a), // 1
      "not json at all", // 2
      `${JSON.stringify(b)}\r`, // 3: CRLF is fine
      "", // 4: blank
      "[1,2,3]", // 5
      JSON.stringify(badId), // 6
      JSON.stringify(badSig), // 7
      JSON.stringify({ id: a.id }), // 8
      JSON.stringify(eph), // 9
      JSON.stringify(c), // 10
      JSON.stringify(a), // 11: duplicate
      JSON.stringify(c).slice(0, 50), // 12: truncated
      JSON.stringify(d), // 13, no final newline
    ];
    const data = dir();
    const file = join(data, "broken.jsonl");
    writeFileSync(file, lines.join("\n"));
    const s = importJson([file, "--data", data]);
    expect(s).toMatchObject({
      lines: 13,
      accepted: 4,
      duplicate: 1,
      ephemeral: 1,
      invalid: 6,
      blank: 1,
      older: 0,
      errors: 0,
    });
    expect(s.problems.map((p) => p.line)).toEqual([2, 5, 6, 7, 8, 12]);
    const reason = Object.fromEntries(s.problems.map((p) => [p.line, p.reason]));
    expect(reason[2]).toStartWith("invalid: not JSON");
    expect(reason[5]).toBe("invalid: event must be a JSON object");
    expect(reason[6]).toBe("invalid: event id does not match the sha256 of its serialization");
    expect(reason[7]).toBe("invalid: signature verification failed");
    expect(reason[8]).toStartWith("invalid: ");
    expect(reason[12]).toStartWith("invalid: not JSON");
    expect(idsOf(exportLines(data))).toEqual([a.id, b.id, c.id, d.id]);

    // The text summary names the same lines, and the exit status is still 0.
    const text = relay(["import", file, "--data", dir()]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/accepted +4\n/);
    expect(text.out).toContain("line 6: invalid: event id does not match the sha256 of its serialization");
    expect(text.out).toContain("line 7: invalid: signature verification failed");
    expect(text.err).toBe(""); // short runs print no progress lines when stderr is not a terminal

    // --no-verify skips signatures but never ids; standard input works the same as a file.
    const nv = importJson(["-", "--no-verify", "--data", dir()], lines.join("\n"));
    expect(nv).toMatchObject({ accepted: 5, invalid: 5 });
    expect(nv.problems.map((p) => p.line)).toEqual([2, 5, 6, 8, 12]);
  });

  test("only the first 20 problems are listed; all are counted", () => {
    const bad = Array.from({ length: 25 }, (_, i) => `{"broken": ${i}`);
    const s = importJson(["--data", dir()], `${[...bad, JSON.stringify(GENERATED[0])].join("\n")}\n`);
    expect(s).toMatchObject({ invalid: 25, accepted: 1 });
    expect(s.problems.map((p) => p.line)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  test("replaceable rules as for live events: an older version is counted as older, a newer one replaces", () => {
    const v1 = sign(0, { kind: 0, created_at: BASE + 100, content: "v1" });
    const v2 = sign(0, { kind: 0, created_at: BASE + 200, content: "v2" });
    const up = importJson(["--data", dir()], jsonl([v1, v2]));
    expect(up).toMatchObject({ accepted: 2, replaced: 1, older: 0 });
    const d = dir();
    expect(importJson(["--data", d], jsonl([v2, v1]))).toMatchObject({ accepted: 1, older: 1, replaced: 0 });
    expect(idsOf(exportLines(d))).toEqual([v2.id]);
  });

  test("usage errors exit 2, unreadable input exits 1, and neither creates a data directory", () => {
    const d = join(dir(), "never");
    const cases: [string[], number, string][] = [
      [["import", "a.jsonl", "b.jsonl", "--data", d], 2, "relay import: unexpected argument 'b.jsonl'\n"],
      [["import", "--bogus", "--data", d], 2, "relay import: unknown option --bogus\n"],
      [["import", "--no-verify=yes", "--data", d], 2, "relay import: --no-verify takes no value\n"],
      [["import", join(ROOT, "no-such-file.jsonl"), "--data", d], 1, "relay import: cannot read "],
      [["import", ROOT, "--data", d], 1, "is a directory"],
      [["export", "--data", d], 1, `relay export: no relay data in ${d} (no data.mdb)\n`],
      [["export", "--filter", "{nope", "--data", d], 2, "relay export: --filter is not JSON"],
      [["export", "--filter", '{"limit":5}', "--data", d], 2, "limit is not supported here"],
      [["export", "--filter", '{"kinds":["x"]}', "--data", d], 2, "kinds must be integers"],
      [
        ["export", "--since", "yesterday", "--data", d],
        2,
        "--since must be unix seconds or an ISO 8601 date",
      ],
      [["stats", "--data", d], 1, "no relay data in"],
      [["compact", "--data", d], 2, "needs DEST"],
      [["delete", "--data", d], 2, "needs --filter JSON"],
      [["delete", "--filter", "{}", "--data", d], 1, "no relay data in"],
    ];
    for (const [args, code, message] of cases) {
      const r = relay(args);
      expect({ args, code: r.code, out: r.out }).toEqual({ args, code, out: "" });
      expect(r.err).toContain(message);
      expect(r.err.split("\n").length).toBe(2); // one line, no stack trace
    }
    expect(existsSync(d)).toBe(false);
  });

  test("--help documents every data command", () => {
    for (const cmd of ["import", "export", "stats", "compact", "backup", "check", "delete"]) {
      const r = relay([cmd, "--help"]);
      expect(r.code).toBe(0);
      expect(r.out).toStartWith(`relay ${cmd}`);
    }
    expect(relay(["--help"]).out).toMatch(
      /import[\s\S]*export[\s\S]*stats[\s\S]*compact[\s\S]*backup[\s\S]*check[\s\S]*delete/,
    );
  });
});

describe("relay export", () => {
  const data = (() => {
    const d = dir(); // here, to outlive the first test that fills it
    let filled = false;
    return () => {
      if (!filled) generatedRelay(d);
      filled = true;
      return d;
    };
  })();
  const wanted = (pred: (e: NostrEvent) => boolean) => oldestFirst(GENERATED.filter(pred)).map((e) => e.id);

  const cases: [string, string[], (e: NostrEvent) => boolean][] = [
    ["kinds", ["--filter", '{"kinds":[0,30023]}'], (e) => e.kind === 0 || e.kind === 30023],
    [
      "authors",
      ["--filter", JSON.stringify({ authors: [pk(1), pk(3)] })],
      (e) => [pk(1), pk(3)].includes(e.pubkey),
    ],
    [
      "authors × kinds",
      ["--filter", JSON.stringify({ authors: [pk(2)], kinds: [1] })],
      (e) => e.pubkey === pk(2) && e.kind === 1,
    ],
    ["#t", ["--filter", '{"#t":["alpha"]}'], (e) => e.tags.some((t) => t[0] === "t" && t[1] === "alpha")],
    [
      "#t with two values (each event once)",
      ["--filter", '{"#t":["alpha","beta"]}'],
      (e) => e.tags.some((t) => t[0] === "t"),
    ],
    [
      "#p and kinds",
      ["--filter", JSON.stringify({ "#p": [pk(1)], kinds: [7] })],
      (e) => e.kind === 7 && e.tags.some((t) => t[0] === "p" && t[1] === pk(1)),
    ],
    [
      "#r with a value too long to index",
      ["--filter", JSON.stringify({ "#r": ["x".repeat(300)] })],
      (e) => e.tags.some((t) => t[0] === "r"),
    ],
    [
      "ids",
      ["--filter", JSON.stringify({ ids: [GENERATED[40]!.id, GENERATED[3]!.id, "00".repeat(32)] })],
      (e) => e.id === GENERATED[40]!.id || e.id === GENERATED[3]!.id,
    ],
    [
      "--since/--until (inclusive)",
      ["--since", String(BASE + 20), "--until", String(BASE + 25)],
      (e) => e.created_at >= BASE + 20 && e.created_at <= BASE + 25,
    ],
    [
      "--filter with since, narrowed by --until",
      ["--filter", JSON.stringify({ kinds: [1], since: BASE + 30 }), "--until", String(BASE + 40)],
      (e) => e.kind === 1 && e.created_at >= BASE + 30 && e.created_at <= BASE + 40,
    ],
    [
      "--since as an ISO date",
      ["--since", new Date((BASE + 45) * 1000).toISOString()],
      (e) => e.created_at >= BASE + 45,
    ],
    ["an empty ids list", ["--filter", '{"ids":[]}'], () => false],
  ];
  for (const [name, args, pred] of cases)
    test(`${name} exports exactly the matching events, oldest first`, () => {
      const want = wanted(pred);
      expect(idsOf(exportLines(data(), ...args))).toEqual(want);
    });

  test("the summary goes to stderr; stdout closed early (| head) is not an error", () => {
    const r = relay(["export", "--data", data()]);
    expect(r.err).toMatch(/^exported 80 events in [\d.]+ s \([\d,]+ events\/s\)\n$/);
    const p = cliSync(["export", "--data", data()], { via: ["sh", "-c", '"$@" | head -n 1', "sh"] });
    expect(p.code).toBe(0);
    expect(p.out).toBe(`${storedJson(oldestFirst(GENERATED)[0]!)}\n`);
  });
});

describe("relay delete", () => {
  /** Serial of each id, read in-process while no CLI runs. */
  async function serialsOf(d: string, ids: string[]): Promise<Map<string, number>> {
    const s = openStore(d);
    const out = new Map<string, number>();
    for (const id of ids) {
      const v = s.ids.get(Buffer.from(id, "hex"));
      if (v) out.set(id, readU64(v, 0));
    }
    await closeStore(s);
    return out;
  }

  test("--dry-run lists what would go and changes nothing; the real run removes events and every index entry", async () => {
    const d = generatedRelay();
    const filter = JSON.stringify({ authors: [pk(3)] });
    const gone = oldestFirst(GENERATED.filter((e) => e.pubkey === pk(3)));
    const kept = oldestFirst(GENERATED.filter((e) => e.pubkey !== pk(3)));
    const goneIds = gone.map((e) => e.id);
    expect(gone.length).toBeGreaterThan(10);
    expect(gone.some((e) => e.kind === 0) && gone.some((e) => e.kind === 30023)).toBe(true);

    const before = relay(["stats", "--json", "--data", d]).out;
    const dry = relay(["delete", "--filter", filter, "--dry-run", "--data", d]);
    expect(dry.code).toBe(0);
    expect(dry.out).toBe(goneIds.map((id) => `${id}\n`).join(""));
    expect(dry.err).toBe(`dry run: ${gone.length} events match; nothing deleted\n`);
    expect(relay(["stats", "--json", "--data", d]).out).toBe(before);

    const serials = await serialsOf(d, goneIds);
    expect(serials.size).toBe(gone.length);
    const real = relay(["delete", "--filter", filter, "--data", d]);
    expect(real.code).toBe(0);
    expect(real.out).toBe(dry.out);
    expect(real.err).toBe(`deleted ${gone.length} events\n`);

    expect(exportLines(d, "--filter", filter)).toEqual([]);
    expect(idsOf(exportLines(d))).toEqual(kept.map((e) => e.id));

    // Every index entry of every removed event is gone, and so are their replaceable pointers.
    const s = openStore(d);
    try {
      for (const e of gone) {
        const serial = serials.get(e.id)!;
        expect(s.ids.get(Buffer.from(e.id, "hex"))).toBeUndefined();
        expect(s.events.getBinary(serialKey(serial))).toBeUndefined();
        for (const [db, key] of indexEntries(s, e, serial)) expect(hasEntry(db, key)).toBe(false);
        if (e.kind === 0) expect(s.replaceable.get(replaceableKey(e.pubkey, 0, ""))).toBeUndefined();
        const dTag = e.tags.find((t) => t[0] === "d")?.[1];
        if (e.kind === 30023)
          expect(s.replaceable.get(replaceableKey(e.pubkey, 30023, dTag!))).toBeUndefined();
      }
      const stats = (db: typeof s.events) => (db.getStats() as { entryCount: number }).entryCount;
      for (const db of [s.events, s.ids, s.time, s.pubkey, s.kind, s.pubkind])
        expect(stats(db)).toBe(kept.length);
    } finally {
      await closeStore(s);
    }

    // A running relay on the same data finds none of them by id, author, kind or tag.
    const r = startTestRelay({}, d);
    const c = await RawClient.connect(r.url);
    try {
      const ask = async (f: object) => c.req(`q${Math.random()}`, { ...f, limit: 1000 });
      expect(await ask({ ids: goneIds.slice(0, 50) })).toEqual([]);
      expect(await ask({ authors: [pk(3)] })).toEqual([]);
      const alpha = await ask({ "#t": ["alpha"] });
      expect(alpha.filter((id) => goneIds.includes(id))).toEqual([]);
      expect(alpha.length).toBe(kept.filter((e) => e.tags.some((t) => t[1] === "alpha")).length);
      const kind0 = await ask({ kinds: [0] });
      expect(kind0.filter((id) => goneIds.includes(id))).toEqual([]);
      expect(kind0.length).toBe(4);
      expect(await ask({ authors: [pk(3)], kinds: [30023] })).toEqual([]);
    } finally {
      c.close();
      await r.destroy();
    }
  }, 30_000);

  test("after deleting a replaceable event an older version is accepted again (its pointer was cleared)", () => {
    const d = dir();
    const v1 = sign(3, { kind: 0, created_at: BASE + 100, content: "v1" });
    const v2 = sign(3, { kind: 0, created_at: BASE + 200, content: "v2" });
    importJson(["--data", d], jsonl([v2]));
    expect(importJson(["--data", d], jsonl([v1]))).toMatchObject({ accepted: 0, older: 1 });
    expect(relay(["delete", "--filter", JSON.stringify({ ids: [v2.id] }), "--data", d]).code).toBe(0);
    expect(importJson(["--data", d], jsonl([v1]))).toMatchObject({ accepted: 1, older: 0 });
    expect(idsOf(exportLines(d))).toEqual([v1.id]);
  });

  test("a filter that matches nothing deletes nothing", () => {
    const d = generatedRelay();
    const r = relay(["delete", "--filter", '{"#t":["no-such-topic"]}', "--data", d]);
    expect({ code: r.code, out: r.out, err: r.err }).toEqual({ code: 0, out: "", err: "deleted 0 events\n" });
    expect(exportLines(d).length).toBe(GENERATED.length);
  });
});
