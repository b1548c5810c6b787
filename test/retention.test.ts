// Retention rules (retention.rules, NIP-11's `retention`) on a real relay over real LMDB: a time
// rule removes backdated events in the background within seconds and refuses them when sent
// again; a count rule keeps exactly the newest N in NIP-01 order and refuses what is older; NIP-11
// advertises the rules exactly as configured; and after pruning, REQ, COUNT, search, the API's
// counts and the derived indexes rebuilt from scratch all agree.
import { describe, expect, test } from "bun:test";
import * as nip19 from "nostr-tools/nip19";
import type { Event } from "nostr-tools/pure";
import { getPublicKey } from "nostr-tools/pure";
import { loadConfig } from "../src/config/load.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import { REGISTERS_CONSUMER } from "../src/count/registers.ts";
import { markStale } from "../src/store/consumer.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import type { BinDb } from "../src/store/types.ts";
import { checked } from "./crash-check.ts";
import { newKey, now, RawClient, signed, startTestRelay, tempDir } from "./harness.ts";
import { until } from "./procs.ts";

const HOUR = 3600;
/** Sweeps every second, so that "within seconds" is what the tests wait for. */
const FAST = { "retention.intervalSeconds": "1" };

/** NIP-01 order: created_at descending, then id ascending. */
const nipOrder = (a: Event, b: Event): number =>
  b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const ids = (es: Event[]): string[] => es.map((e) => e.id);

async function metricOf(url: string, sample: string): Promise<number | undefined> {
  const text = await (await fetch(`${url.replace(/^ws/, "http")}/metrics`)).text();
  for (const line of text.split("\n"))
    if (line.startsWith(`${sample} `)) return Number(line.slice(sample.length + 1));
  return undefined;
}

describe("retention rules", () => {
  test("a time rule removes backdated events within seconds and refuses them when sent again", async () => {
    const dir = tempDir();
    const sk = newKey();
    const t = now();
    const old = Array.from({ length: 600 }, (_, i) =>
      signed(sk, { created_at: t - 2 * HOUR - i, content: `old note ${i}` }),
    );
    const recent = Array.from({ length: 20 }, (_, i) =>
      signed(sk, { created_at: t - i, content: `new ${i}` }),
    );
    const oldReactions = Array.from({ length: 10 }, (_, i) =>
      signed(sk, { kind: 7, created_at: t - 2 * HOUR - i, tags: [["e", old[i]!.id]], content: "+" }),
    );
    // Stored while no rule applies.
    const before = startTestRelay({}, dir);
    const a = await RawClient.connect(before.url);
    for (const e of [...old, ...recent, ...oldReactions]) expect((await a.publish(e))[2]).toBe(true);
    a.close();
    await before.stop();

    const relay = startTestRelay({ ...FAST, "retention.rules": '[{"kinds":[1],"time":3600}]' }, dir);
    const c = await RawClient.connect(relay.url);
    const started = Date.now();
    await until(
      "the notes past the rule to be removed",
      async () => (await c.req("n", { kinds: [1], limit: 5000 })).length === recent.length,
      10_000,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await c.req("n", { kinds: [1], limit: 5000 })).sort()).toEqual(ids(recent).sort());
    // Kinds the rule does not name are kept, however old.
    expect((await c.req("r", { kinds: [7] })).sort()).toEqual(ids(oldReactions).sort());
    expect(await metricOf(relay.url, 'relay_events_removed_total{by="rule"}')).toBe(old.length);

    // Sent again, each is refused with the rule that applies; a note within the hour is taken.
    expect(await c.publish(old[0]!)).toEqual([
      "OK",
      old[0]!.id,
      false,
      'blocked: this relay keeps kind 1 events for 1 hour after their created_at, and this one is older (retention rule 1: {"kinds":[1],"time":3600})',
    ]);
    const fresh = signed(sk, { created_at: now() - HOUR + 60, content: "inside the hour" });
    expect(await c.publish(fresh)).toEqual(["OK", fresh.id, true, ""]);
    expect(await c.req("gone", { ids: ids(old) })).toEqual([]);
    c.close();
    await relay.destroy();
    await checked(dir);
  }, 60_000);

  test("a count rule keeps exactly the newest N in NIP-01 order and refuses what is older than all of them", async () => {
    const sk = newKey();
    const t = now() - 1000;
    // Ties on created_at around the cut: the lowest ids are the newest of a tie.
    const reactions = Array.from({ length: 30 }, (_, i) =>
      signed(sk, { kind: 7, created_at: t + Math.floor(i / 3), content: `+${i}` }),
    );
    const notes = Array.from({ length: 8 }, (_, i) =>
      signed(sk, { created_at: t + i, content: `kept ${i}` }),
    );
    const relay = startTestRelay({ ...FAST, "retention.rules": '[{"kinds":[6,7],"count":10}]' });
    const c = await RawClient.connect(relay.url);
    for (const e of [...reactions, ...notes]) expect((await c.publish(e))[2]).toBe(true);
    const newest = [...reactions].sort(nipOrder).slice(0, 10);
    await until(
      "the count rule to cut the reactions to 10",
      async () => (await c.req("r", { kinds: [7], limit: 100 })).length === 10,
      10_000,
    );
    // Exactly the newest ten, in the order a REQ gives them; other kinds untouched.
    expect(await c.req("r", { kinds: [7], limit: 100 })).toEqual(ids(newest));
    expect((await c.req("n", { kinds: [1] })).sort()).toEqual(ids(notes).sort());

    // Older than the oldest kept: refused. Newer: taken, and the oldest kept goes.
    const older = signed(sk, { kind: 7, created_at: t, content: "too old" });
    const ok = await c.publish(older);
    expect(ok.slice(0, 3)).toEqual(["OK", older.id, false]);
    expect(ok[3]).toBe(
      'blocked: this relay keeps the newest 10 events of the kinds this rule covers, and this kind 7 event is older than all of them (retention rule 1: {"kinds":[6,7],"count":10})',
    );
    const repost = signed(sk, { kind: 6, created_at: t + 100, content: "" });
    expect(await c.publish(repost)).toEqual(["OK", repost.id, true, ""]);
    const expected = [repost, ...newest.slice(0, 9)];
    await until(
      "the oldest kept reaction to go",
      async () => (await c.req("r", { kinds: [6, 7], limit: 100 })).join() === ids(expected).join(),
      10_000,
    );
    c.send(["COUNT", "c", { kinds: [6, 7] }]);
    expect((await c.next((f) => f[0] === "COUNT"))[2]).toEqual({ count: 10 });
    c.close();
  }, 60_000);

  test("NIP-11 advertises the rules exactly as configured, and nothing without rules", async () => {
    const rules = [
      { kinds: [0, 1, [5, 7], [40, 49]], time: 3600 },
      { kinds: [[40000, 49999]], time: 100 },
      { kinds: [[30000, 39999]], count: 1000 },
      { time: 3600, count: 10000 },
    ];
    const info = async (url: string) =>
      (await (
        await fetch(url.replace(/^ws/, "http"), { headers: { Accept: "application/nostr+json" } })
      ).json()) as Record<string, unknown>;
    const relay = startTestRelay({ "retention.rules": JSON.stringify(rules) });
    expect((await info(relay.url)).retention).toEqual(rules);
    const plain = startTestRelay();
    expect("retention" in (await info(plain.url))).toBe(false);
  });
});

/** Every entry of a derived database, as hex pairs. */
const entries = (db: BinDb): [string, string][] =>
  Array.from(db.getRange({}), ({ key, value }) => [
    (key as Buffer).toString("hex"),
    (value as Buffer).toString("hex"),
  ]);

describe("after pruning", () => {
  test("REQ, COUNT, search and the API's counts agree with each other and with a recount from scratch", async () => {
    const dir = tempDir();
    const authors = [newKey(), newKey(), newKey()];
    const pubkeys = authors.map((k) => getPublicKey(k));
    const t = now();
    const notes: Event[] = [];
    authors.forEach((sk, a) => {
      for (let i = 0; i < 40; i++)
        notes.push(
          signed(sk, {
            // Half of each author's notes are past the rule's day.
            created_at: i % 2 ? t - 2 * 86400 - i : t - 100 - i,
            content: `prunedword${a} shared${i % 4} note ${i}`,
          }),
        );
    });
    const reactions: Event[] = [];
    notes.forEach((n, i) => {
      for (let j = 0; j < 3; j++)
        reactions.push(
          signed(authors[(i + j) % 3]!, {
            kind: 7,
            created_at: t - 500 + i * 3 + j,
            tags: [
              ["e", n.id],
              ["p", n.pubkey],
            ],
            content: "+",
          }),
        );
    });
    const follows = authors.map((sk, a) =>
      signed(sk, {
        kind: 3,
        created_at: t - 5 * 86400,
        tags: pubkeys.filter((_, b) => b !== a).map((p) => ["p", p]),
      }),
    );
    const first = startTestRelay({}, dir);
    const a = await RawClient.connect(first.url);
    for (const e of [...follows, ...notes, ...reactions]) expect((await a.publish(e))[2]).toBe(true);
    a.close();
    await first.stop();

    // Notes a day, reactions 200 in all (the newest), profiles and follows forever.
    const rules = [{ kinds: [0, 3] }, { kinds: [1], time: 86400 }, { kinds: [7], count: 200 }];
    const relay = startTestRelay({ ...FAST, "retention.rules": JSON.stringify(rules) }, dir);
    const c = await RawClient.connect(relay.url);
    const keptNotes = notes.filter((n) => n.created_at > t - 86400);
    const keptReactions = [...reactions].sort(nipOrder).slice(0, 200);
    await until(
      "the rules to be applied",
      async () =>
        (await c.req("n", { kinds: [1], limit: 5000 })).length === keptNotes.length &&
        (await c.req("r", { kinds: [7], limit: 5000 })).length === 200,
      15_000,
    );
    expect((await c.req("r", { kinds: [7], limit: 5000 })).sort()).toEqual(ids(keptReactions).sort());
    expect((await c.req("f", { kinds: [3] })).sort()).toEqual(ids(follows).sort());
    await until("the derived indexes to apply the removals", async () => {
      return (await metricOf(relay.url, 'relay_consumer_lag_events{consumer="search"}')) === 0;
    });

    const count = async (filter: object): Promise<number> => {
      const from = c.frames.length;
      c.send(["COUNT", "k", filter]);
      return ((await c.next((f) => f[0] === "COUNT" && f[1] === "k", 5000, from))[2] as { count: number })
        .count;
    };
    expect(await count({ kinds: [1] })).toBe(keptNotes.length);
    expect(await count({ kinds: [7] })).toBe(200);
    for (const n of notes) {
      const likes = keptReactions.filter((r) => r.tags[0]![1] === n.id).length;
      // The NIP-45 shape answered from its records, and the same by a REQ.
      expect([n.id, await count({ kinds: [7], "#e": [n.id] })]).toEqual([n.id, likes]);
      expect([n.id, (await c.req("q", { kinds: [7], "#e": [n.id] })).length]).toEqual([n.id, likes]);
    }
    for (let a = 0; a < 3; a++) {
      const kept = keptNotes.filter((n) => n.pubkey === pubkeys[a]);
      expect((await c.req("s", { search: `prunedword${a}`, limit: 500 })).sort()).toEqual(ids(kept).sort());
      const res = await fetch(
        `${relay.url.replace(/^ws/, "http")}/v0/p/${nip19.npubEncode(pubkeys[a]!)}?limit=100`,
      );
      const profile = (await res.json()) as {
        followers: number;
        notes: { count: number; latest: { event: Event; counts: { likes: number } }[] };
      };
      expect(profile.followers).toBe(2);
      expect(profile.notes.count).toBe(kept.length);
      for (const { event, counts } of profile.notes.latest)
        expect([event.id, counts.likes]).toEqual([
          event.id,
          keptReactions.filter((r) => r.tags[0]![1] === event.id).length,
        ]);
    }
    expect(await c.req("s", { search: "shared1", limit: 500 })).toEqual([]);
    c.close();
    await relay.destroy();

    // The derived indexes as the removals left them equal the same rebuilt from the log.
    await checked(dir);
    const s = openStore(dir);
    try {
      const config = loadConfig({ flags: { data: dir } });
      let d = openConsumers(s, config, { log: () => {} });
      const snapshot = () => [
        ...[d.counters!.notes, d.counters!.pubkeys].map(entries),
        entries(d.registers!.db),
        (({ docs, totalLength }) => [docs, totalLength])(d.search!.snapshot()),
      ];
      const kept = snapshot();
      await d.runner.stop();
      for (const name of ["counters", REGISTERS_CONSUMER, "search"]) markStale(s, name);
      d = openConsumers(s, config, { log: () => {} });
      expect(snapshot()).toEqual(kept);
      await d.runner.stop();
    } finally {
      await closeStore(s);
    }
  }, 90_000);
});
