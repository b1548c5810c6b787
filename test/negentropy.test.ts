// NIP-77 over real WebSockets: nostr-tools' negentropy codec as the client against our relay,
// exact have/need sets for several filters and sizes (100,000 items in a few round trips), the
// read rules a REQ has, and every limit answered with NEG-ERR.
// Setup data is written straight through the relay's writer (ids computed, signatures not
// checked: signing 100,000 events would take minutes); the code under test reads it as stored.
import { describe, expect, test } from "bun:test";
import { nip77 } from "nostr-tools";
import { finalizeEvent, getPublicKey } from "nostr-tools/pure";
import { computeId, storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import type { Filter } from "../src/nostr/filter.ts";
import { matchFilter } from "../src/nostr/filter.ts";
import { Gen } from "./gen.ts";
import type { TestRelay } from "./harness.ts";
import { newKey, now, RawClient, signed, startTestRelay } from "./harness.ts";

const { Negentropy, NegentropyStorageVector } = nip77;

/** An event with a correct id and a placeholder signature, for setup data only. */
function fake(
  g: Gen,
  t: { pubkey: string; kind: number; created_at: number; tags?: string[][] },
): NostrEvent {
  const e = { ...t, tags: t.tags ?? [], content: `c${g.hex(12)}`, id: "", sig: "0".repeat(128) };
  e.id = computeId(e);
  return e;
}

async function store(r: TestRelay, events: NostrEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += 5000) {
    const chunk = events.slice(i, i + 5000);
    const out = await r.ctx.writer.submitMany(chunk.map((event) => ({ event, json: storedJson(event) })));
    for (const o of out) expect(o.status).toBe("stored");
  }
}

interface Outcome {
  have: string[];
  need: string[];
  rounds: number;
}

/** Reconciles the client's items for a filter against the relay; have/need sorted. */
async function reconcile(
  c: RawClient,
  subId: string,
  filter: Filter,
  mine: readonly { created_at: number; id: string }[],
): Promise<Outcome> {
  const storage = new NegentropyStorageVector();
  for (const e of mine) storage.insert(e.created_at, e.id);
  storage.seal();
  const neg = new Negentropy(storage, 60_000);
  const have: string[] = [];
  const need: string[] = [];
  let msg: string | null = neg.initiate();
  let rounds = 0;
  c.send(["NEG-OPEN", subId, filter, msg]);
  while (msg !== null) {
    const from = c.frames.length;
    const reply = await c.next(
      (f) => (f[0] === "NEG-MSG" || f[0] === "NEG-ERR") && f[1] === subId,
      60_000,
      from,
    );
    if (reply[0] === "NEG-ERR") throw new Error(String(reply[2]));
    rounds++;
    msg = neg.reconcile(
      reply[2] as string,
      (id) => have.push(id),
      (id) => need.push(id),
    );
    if (msg !== null) c.send(["NEG-MSG", subId, msg]);
  }
  c.send(["NEG-CLOSE", subId]);
  return { have: have.sort(), need: need.sort(), rounds };
}

const ids = (es: readonly NostrEvent[]) => es.map((e) => e.id).sort();
const nextErr = (c: RawClient, subId: string) =>
  c.next((f) => f[0] === "NEG-ERR" && f[1] === subId, 20_000).then((f) => f[2] as string);

describe("NIP-77 negentropy sessions", () => {
  test("reconcile exact have/need sets for several filters", async () => {
    const r = startTestRelay();
    const g = new Gen(77);
    const authors = Array.from({ length: 4 }, () => g.hex(64));
    const base = 1_700_000_000;
    const relayEvents: NostrEvent[] = [];
    for (let i = 0; i < 600; i++)
      relayEvents.push(
        fake(g, {
          pubkey: g.pick(authors),
          kind: g.pick([1, 1, 7, 1111]),
          created_at: base + g.int(200), // many created_at ties, ordered by id
          tags: g.chance(0.3)
            ? [["t", g.pick(["nostr", "bitcoin"])]]
            : g.chance(0.3)
              ? [["d", g.hex(6)]]
              : [],
        }),
      );
    await store(r, relayEvents);
    // The client holds two thirds of the relay's events and some of its own.
    const shared = relayEvents.filter(() => g.chance(0.66));
    const own = Array.from({ length: 50 }, () =>
      fake(g, { pubkey: g.pick(authors), kind: g.pick([1, 7]), created_at: base + g.int(200) }),
    );
    const filters: Filter[] = [
      {},
      { kinds: [1] },
      { authors: [authors[0]!, authors[1]!] },
      { authors: [authors[2]!], kinds: [7] },
      { tags: [["t", ["nostr"]]] } as Filter,
      { since: base + 50, until: base + 120 },
      { kinds: [1111], since: base + 100 },
      { ids: relayEvents.slice(0, 30).map((e) => e.id) },
    ];
    const wire = (f: Filter): unknown => {
      const { tags, ...rest } = f as Filter & { tags?: [string, string[]][] };
      const w: Record<string, unknown> = { ...rest };
      for (const [l, v] of tags ?? []) w[`#${l}`] = v;
      return w;
    };
    const c = await RawClient.connect(r.url);
    let n = 0;
    for (const f of filters) {
      const theirs = relayEvents.filter((e) => matchFilter(f, e));
      const mine = [...shared, ...own].filter((e) => matchFilter(f, e));
      const mineIds = new Set(mine.map((e) => e.id));
      const theirIds = new Set(theirs.map((e) => e.id));
      const out = await reconcile(c, `s${n++}`, wire(f) as Filter, mine);
      expect(out.have).toEqual(ids(mine.filter((e) => !theirIds.has(e.id))));
      expect(out.need).toEqual(ids(theirs.filter((e) => !mineIds.has(e.id))));
    }
    c.close();
  });

  test("100,000 items with a few differences take a few round trips", async () => {
    const r = startTestRelay();
    const g = new Gen(100_000);
    const pk = g.hex(64);
    const base = 1_600_000_000;
    const all = Array.from({ length: 100_000 }, (_, i) =>
      fake(g, { pubkey: pk, kind: 1, created_at: base + Math.floor(i / 3) }),
    );
    await store(r, all);
    const missing = [all[5]!, all[50_000]!, all[99_998]!]; // the client lacks these
    const extra = Array.from({ length: 4 }, (_, i) =>
      fake(g, { pubkey: pk, kind: 1, created_at: base + 10_000 * (i + 1) }),
    );
    const gone = new Set(missing.map((e) => e.id));
    const mine = [...all.filter((e) => !gone.has(e.id)), ...extra];
    const c = await RawClient.connect(r.url);
    const out = await reconcile(c, "big", { kinds: [1] }, mine);
    expect(out.need).toEqual(ids(missing));
    expect(out.have).toEqual(ids(extra));
    // log16(100,000) ≈ 4 levels of ranges: each difference is found within that many replies.
    expect(out.rounds).toBeLessThanOrEqual(5);
    // The same set on both sides: one reply says so.
    const same = await reconcile(c, "same", { kinds: [1] }, all);
    expect(same).toEqual({ have: [], need: [], rounds: 1 });
    c.close();
  }, 120_000);

  test("the read rules of a REQ apply: restricted kinds need AUTH, deleted and expired events are not offered", async () => {
    const r = startTestRelay();
    const alice = newKey();
    const bob = newKey();
    const c = await RawClient.connect(r.url);
    const note = signed(alice, { content: "public" });
    const dm = signed(alice, { kind: 4, tags: [["p", getPublicKey(bob)]], content: "secret" });
    const expiring = signed(alice, { tags: [["expiration", String(now() + 2)]], content: "soon gone" });
    const regretted = signed(alice, { content: "deleted by its author" });
    const deletion = signed(alice, { kind: 5, tags: [["e", regretted.id]] });
    for (const e of [note, dm, expiring, regretted, deletion]) expect((await c.publish(e))[2]).toBe(true);
    // Not authenticated: the restricted kind alone is refused, mixed filters leave it out.
    c.send(["NEG-OPEN", "dm", { kinds: [4] }, new Negentropy(sealed([]), 60_000).initiate()]);
    expect(await nextErr(c, "dm")).toStartWith("auth-required: ");
    const before = await reconcile(c, "all", {}, []);
    // The deleted note is gone; its deletion request is an event like any other.
    expect(before.need).toEqual([note.id, expiring.id, deletion.id].sort());
    // Once expired, the event is not offered although not yet purged.
    await waitFor(() => now() > expiring.created_at + 2 && now() > Number(expiring.tags[0]![1]));
    const after = await reconcile(c, "all2", {}, []);
    expect(after.need).toEqual([note.id, deletion.id].sort());
    // Bob, the recipient, authenticates and is offered the DM.
    const challenge = c.frames.find((f) => f[0] === "AUTH")![1] as string;
    const authEvent = finalizeEvent(
      {
        kind: 22242,
        created_at: now(),
        tags: [
          ["relay", r.url],
          ["challenge", challenge],
        ],
        content: "",
      },
      bob,
    );
    c.send(["AUTH", authEvent]);
    expect((await c.ok(authEvent.id))[2]).toBe(true);
    const authed = await reconcile(c, "dm2", { kinds: [4] }, []);
    expect(authed.need).toEqual([dm.id]);
    c.close();
  }, 30_000);
});

function sealed(items: { created_at: number; id: string }[]) {
  const s = new NegentropyStorageVector();
  for (const e of items) s.insert(e.created_at, e.id);
  s.seal();
  return s;
}

async function waitFor(cond: () => boolean, deadlineMs = 20_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(100);
  }
}

describe("NIP-77 limits answer NEG-ERR", () => {
  const initial = () => new Negentropy(sealed([]), 60_000).initiate();

  test("more items than negentropy.maxItems: blocked", async () => {
    const r = startTestRelay({ "negentropy.maxItems": "10" });
    const g = new Gen(1);
    const pk = g.hex(64);
    await store(
      r,
      Array.from({ length: 11 }, (_, i) => fake(g, { pubkey: pk, kind: 1, created_at: 1_700_000_000 + i })),
    );
    const c = await RawClient.connect(r.url);
    c.send(["NEG-OPEN", "x", {}, initial()]);
    expect(await nextErr(c, "x")).toBe("blocked: too many events to reconcile (more than 10)");
    // Ten fit.
    const ok = await reconcile(c, "y", { until: 1_700_000_009 }, []);
    expect(ok.need.length).toBe(10);
    c.close();
  });

  test("more sessions than negentropy.maxSessions: blocked; closing one frees its place", async () => {
    const r = startTestRelay({ "negentropy.maxSessions": "2" });
    const c = await RawClient.connect(r.url);
    for (const id of ["a", "b"]) {
      c.send(["NEG-OPEN", id, {}, initial()]);
      await c.next((f) => f[0] === "NEG-MSG" && f[1] === id);
    }
    c.send(["NEG-OPEN", "c", {}, initial()]);
    expect(await nextErr(c, "c")).toBe("blocked: too many negentropy sessions (at most 2 per connection)");
    c.send(["NEG-CLOSE", "a"]);
    c.send(["NEG-OPEN", "c", {}, initial()]);
    // An empty relay answers with an empty id list for the whole range.
    expect(await c.next((f) => f[0] === "NEG-MSG" && f[1] === "c")).toEqual(["NEG-MSG", "c", "6100000200"]);
    c.close();
  });

  test("bad messages, unknown ids and closed sessions: closed", async () => {
    const r = startTestRelay();
    const c = await RawClient.connect(r.url);
    // Another protocol version: the reply names ours (the protocol's negotiation).
    c.send(["NEG-OPEN", "v", {}, "62"]);
    expect(await c.next((f) => f[1] === "v")).toEqual(["NEG-MSG", "v", "61"]);
    c.send(["NEG-OPEN", "w", {}, "20"]);
    expect(await nextErr(c, "w")).toBe("closed: bad negentropy message: invalid protocol version byte");
    c.send(["NEG-OPEN", "h", {}, "zz"]);
    expect(await nextErr(c, "h")).toBe("closed: bad negentropy message: not hex");
    c.send(["NEG-OPEN", "t", {}, "61ff"]); // truncated
    expect(await nextErr(c, "t")).toStartWith("closed: bad negentropy message: ");
    c.send(["NEG-OPEN", "f", { kinds: "1" }, initial()]);
    expect(await nextErr(c, "f")).toStartWith("invalid: ");
    c.send(["NEG-OPEN", "n"]);
    expect(await nextErr(c, "n")).toStartWith("closed: NEG-OPEN must be");
    c.send(["NEG-MSG", "nobody", "61"]);
    expect(await nextErr(c, "nobody")).toBe("closed: no negentropy session with this id");
    c.send(["NEG-OPEN", "k", {}, initial()]);
    await c.next((f) => f[0] === "NEG-MSG" && f[1] === "k");
    c.send(["NEG-CLOSE", "k"]);
    c.send(["NEG-MSG", "k", "61"]);
    expect(await nextErr(c, "k")).toBe("closed: no negentropy session with this id");
    c.close();
  });

  test("a session left idle past negentropy.timeoutSeconds is closed", async () => {
    const r = startTestRelay({ "negentropy.timeoutSeconds": "1" });
    const c = await RawClient.connect(r.url);
    c.send(["NEG-OPEN", "idle", {}, initial()]);
    await c.next((f) => f[0] === "NEG-MSG" && f[1] === "idle");
    expect(await nextErr(c, "idle")).toBe("closed: negentropy session timed out");
    c.send(["NEG-MSG", "idle", "61"]);
    await c.next(
      (f) => f[0] === "NEG-ERR" && f[1] === "idle" && String(f[2]).includes("no negentropy session"),
    );
    c.close();
  });

  test("NIP-11 lists NIP-77", async () => {
    const r = startTestRelay();
    const info = (await (
      await fetch(r.url.replace("ws", "http"), { headers: { accept: "application/nostr+json" } })
    ).json()) as {
      supported_nips: number[];
    };
    expect(info.supported_nips).toContain(77);
  });
});
