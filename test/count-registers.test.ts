// The NIP-45 registers kept by their consumer (src/count/registers.ts) against a recount over the
// stored events: seeded streams of reactions, reposts, replies, quotes, comments, contact lists
// replaced with unfollows, deletions and expiring events, written through the real Writer. At
// every checkpoint (the consumer behind, caught up, after the expiry purge) each record the
// consumer answers has the exact count and registers, and every COUNT answer equals the recount.
import { describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config/load.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import { countAnswer } from "../src/count/answer.ts";
import { Hll, hllOffset } from "../src/count/hll.ts";
import { recordKey } from "../src/count/registers.ts";
import { HLL_SHAPES } from "../src/count/shapes.ts";
import type { QueryOptions } from "../src/indexes/query.ts";
import { scanOldestFirst } from "../src/indexes/scan.ts";
import { storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import type { Store } from "../src/store/types.ts";
import { Writer } from "../src/store/writer.ts";
import { Gen } from "./gen.ts";
import { tempDir } from "./harness.ts";

const SEEDS = [11, 12, 13];
const NOW = Math.floor(Date.now() / 1000);
const LAGGING = loadConfig({ flags: { "consumers.intervalMs": "1000000", "consumers.maxBatch": "1000000" } });

function stream(g: Gen): { events: NostrEvent[]; values: Map<string, string[]> } {
  const authors = Array.from({ length: 14 }, () => g.hex(64));
  const notes = Array.from({ length: 5 }, () => g.hex(64));
  const people = authors.slice(0, 4);
  const address = `30023:${authors[5]}:post`;
  const values = new Map<string, string[]>([
    ["e", notes],
    ["q", [...notes.slice(0, 2), address]],
    ["E", notes.slice(0, 2)],
    ["p", people],
  ]);
  const events: NostrEvent[] = [];
  let n = 0;
  const ev = (kind: number, pubkey: string, tags: string[][], at = NOW - 1000 + n): NostrEvent => ({
    id: (++n).toString(16).padStart(64, "0"),
    pubkey,
    created_at: at,
    kind,
    tags,
    content: "",
    sig: "cd".repeat(64),
  });
  for (let i = 0; i < 500; i++) {
    const who = g.pick(authors);
    const r = g.int(100);
    const expiring = g.chance(0.05)
      ? [["expiration", String(g.chance(0.5) ? NOW - 5 : NOW + 100_000)]]
      : ([] as string[][]);
    if (r < 30) {
      const target = g.pick(notes);
      const tags = [
        ["e", target],
        ...(g.chance(0.2) ? [["e", target]] : []),
        ...(g.chance(0.2) ? [["e", g.pick(notes)]] : []),
      ];
      events.push(ev(7, who, [...tags, ...expiring]));
    } else if (r < 40) events.push(ev(6, who, [["e", g.pick(notes)], ...expiring]));
    else if (r < 50) events.push(ev(1, who, [["e", g.pick(notes)], ...expiring]));
    else if (r < 58) events.push(ev(g.pick([1, 1111]), who, [["q", g.pick(values.get("q")!)], ...expiring]));
    else if (r < 64)
      events.push(
        ev(1111, who, [
          ["E", g.pick(notes.slice(0, 2))],
          ["q", notes[0]!],
        ]),
      );
    else if (r < 88)
      // Contact lists: newer versions replace older ones, following and unfollowing.
      events.push(
        ev(
          3,
          who,
          people.filter(() => g.chance(0.6)).map((p) => ["p", p]),
          NOW - 1000 + n + (g.chance(0.1) ? -500 : 0),
        ),
      );
    else {
      // A deletion of one of the author's earlier events (a reaction, a contact list...).
      const own = events.filter((e) => e.pubkey === who && e.kind !== 5);
      if (own.length > 0) events.push(ev(5, who, [["e", g.pick(own).id]]));
    }
  }
  return { events, values };
}

/** The answer for one shape and value, counted over the stored events readers may see. */
function recount(live: NostrEvent[], shape: number, value: string): { count: number; hll: string } {
  const s = HLL_SHAPES[shape]!;
  const hll = new Hll(hllOffset(value));
  let count = 0;
  for (const e of live)
    if (s.kinds.includes(e.kind) && e.tags.some((t) => t[0] === s.tag && t[1] === value)) {
      count++;
      hll.add(e.pubkey);
    }
  return { count, hll: hll.hex() };
}

/** The stored events readers may see, and the query options to count them as a relay would. */
function visible(
  store: Store,
  consumers: ReturnType<typeof openConsumers>,
  writer: Writer,
): { live: NostrEvent[]; o: QueryOptions } {
  const hidden = consumers.expiration.hidden;
  const live = [...scanOldestFirst(store, {})]
    .filter((x) => !hidden(x.serial))
    .map((x) => JSON.parse(x.json.toString("utf8")) as NostrEvent);
  const o: QueryOptions = {
    hwm: writer.visibleSerial,
    defaultLimit: 100,
    maxLimit: 1000,
    yieldEvery: 256,
    hidden,
    anyHidden: consumers.expiration.anyHidden,
  };
  return { live, o };
}

describe("NIP-45 registers kept by a consumer", () => {
  for (const seed of SEEDS)
    test(`equal a recount after inserts, replacements, deletions and expiry (seed ${seed})`, async () => {
      const g = new Gen(seed);
      const { events, values } = stream(g);
      const dir = tempDir("registers-");
      const store = openStore(dir);
      const consumers = openConsumers(store, LAGGING, { log: () => {} });
      const writer = new Writer(store, 64, (st, rm) => consumers.runner.committed(st, rm));
      let answered = 0;
      const check = async (when: string) => {
        await writer.drain();
        const { live, o } = visible(store, consumers, writer);
        for (let shape = 0; shape < HLL_SHAPES.length; shape++) {
          const { tag, kinds } = HLL_SHAPES[shape]!;
          for (const value of values.get(tag) ?? []) {
            const want = recount(live, shape, value);
            const label = `${when}: ${tag} ${kinds} ${value.slice(0, 12)}`;
            const kept = consumers.registers!.read(recordKey(shape, tag, value), o.hwm);
            if (kept) {
              answered++;
              expect([label, kept.count, Buffer.from(kept.registers).toString("hex")]).toEqual([
                label,
                want.count,
                want.hll,
              ]);
            }
            const got = await countAnswer(
              store,
              [{ tags: [[tag, [value]]], kinds: [...kinds] }],
              o,
              consumers.registers,
            );
            expect([label, got]).toEqual([label, want]);
          }
        }
      };
      try {
        for (let i = 0; i < events.length; ) {
          const chunk = events.slice(i, i + 1 + g.int(60));
          i += chunk.length;
          await Promise.all(chunk.map((e) => writer.submit(e, storedJson(e))));
          if (g.chance(0.3)) await consumers.runner.flush();
          if (g.chance(0.1)) await check(`after ${i} events`);
        }
        await check("with the consumer behind");
        await consumers.runner.settle();
        await check("caught up");
        await writer.task((s) => consumers.expiration.purge(s, NOW, 10_000));
        await check("after the purge, behind");
        await consumers.runner.settle();
        await check("after the purge, caught up");
        expect(answered).toBeGreaterThan(0);
      } finally {
        await writer.drain();
        await consumers.runner.stop();
        await closeStore(store);
      }
    });

  test("switched off, COUNT counts the tag index; switched on again, the records are rebuilt", async () => {
    const g = new Gen(21);
    const { events, values } = stream(g);
    const dir = tempDir("registers-off-");
    const answers = async (registersOn: boolean, add: readonly NostrEvent[]) => {
      const config = loadConfig({ flags: { "count.registers": String(registersOn) } });
      const store = openStore(dir);
      const consumers = openConsumers(store, config, { log: () => {} });
      const writer = new Writer(store, 64, (st, rm) => consumers.runner.committed(st, rm));
      try {
        for (const e of add) await writer.submit(e, storedJson(e));
        await writer.drain();
        await consumers.runner.settle();
        expect(consumers.registers === undefined).toBe(!registersOn);
        const { live, o } = visible(store, consumers, writer);
        let kept = 0;
        for (let shape = 0; shape < HLL_SHAPES.length; shape++) {
          const { tag, kinds } = HLL_SHAPES[shape]!;
          for (const value of values.get(tag) ?? []) {
            const want = recount(live, shape, value);
            const label = `${registersOn ? "on" : "off"}: ${tag} ${kinds} ${value.slice(0, 12)}`;
            if (consumers.registers?.read(recordKey(shape, tag, value), o.hwm)) kept++;
            const filter = { tags: [[tag, [value]]] as [string, string[]][], kinds: [...kinds] };
            const got = await countAnswer(store, [filter], o, consumers.registers);
            expect([label, got]).toEqual([label, want]);
          }
        }
        return kept;
      } finally {
        await writer.drain();
        await consumers.runner.stop();
        await closeStore(store);
      }
    };
    const half = events.length / 2;
    expect(await answers(true, events.slice(0, half))).toBeGreaterThan(0);
    // Off while replacements and deletions of events it had counted come and are purged.
    expect(await answers(false, events.slice(half))).toBe(0);
    // On again: what it kept is stale, so it is rebuilt from the log at start.
    expect(await answers(true, [])).toBeGreaterThan(0);
  });
});
