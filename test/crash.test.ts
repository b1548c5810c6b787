// kill -9 during heavy ingest. A real relay process takes a pipelined stream of notes, reactions,
// profile and contact-list versions and deletions over several connections, and is killed with
// SIGKILL at a seeded moment. After a restart on the same data: every event answered `OK true`
// (and not removed by a deletion that may have committed) is served by REQ and found by a search
// for its own word (reactions by their #e tag); no newer version than the stored one was
// acknowledged; `relay check` finds nothing; `relay export` lists each event once and importing it again adds nothing; the
// counters equal a recount from scratch; and no search posting or REQ index entry points at a
// removed event. The data commands' crash tests are in crash-data.test.ts.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Event } from "nostr-tools/pure";
import { getPublicKey } from "nostr-tools/pure";
import { loadConfig } from "../src/config/load.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import { decodeBlock } from "../src/search/blocks.ts";
import { markStale, readWatermark } from "../src/store/consumer.ts";
import { allEntries } from "../src/store/index-db.ts";
import { keySerial, readU64, serialKey } from "../src/store/keys.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import type { BinDb, Store } from "../src/store/types.ts";
import { checked } from "./crash-check.ts";
import { Gen } from "./gen.ts";
import { newKey, now, RawClient, signed, tempDir } from "./harness.ts";
import { cli, serve } from "./procs.ts";

const SEEDS = Number(process.env.CRASH_SEEDS ?? 3);
const FIRST_SEED = Number(process.env.CRASH_SEED ?? 11);
const AUTHORS = 12;
const CONNECTIONS = 4;
const IN_FLIGHT = 40;

const spawnRelay = serve;

interface Corpus {
  events: Event[];
  /** note id → the word only that note holds */
  word: Map<string, string>;
  /** deletion id → the note ids it names */
  deletes: Map<string, string[]>;
}

/** Notes, reactions, versions of profiles and contact lists, and deletions of some notes. */
function corpus(): Corpus {
  const keys = Array.from({ length: AUTHORS }, () => newKey());
  const pubkeys = keys.map((k) => getPublicKey(k));
  const t0 = now() - 3600;
  const events: Event[] = [];
  const word = new Map<string, string>();
  const deletes = new Map<string, string[]>();
  const notes: Event[] = [];
  keys.forEach((sk, a) => {
    for (let v = 0; v < 6; v++) {
      events.push(
        signed(sk, { kind: 0, created_at: t0 + v, content: JSON.stringify({ name: `author${a}v${v}` }) }),
      );
      events.push(
        signed(sk, {
          kind: 3,
          created_at: t0 + v,
          tags: pubkeys.filter((_, j) => (j + v) % 3 === 0).map((p) => ["p", p]),
        }),
      );
    }
    for (let i = 0; i < 25; i++) {
      const w = `crashword${a}x${i}`;
      const n = signed(sk, { created_at: t0 + 10 + i, content: `common words and ${w} here` });
      word.set(n.id, w);
      notes.push(n);
      events.push(n);
    }
  });
  notes.forEach((n, i) => {
    const sk = keys[i % AUTHORS]!;
    events.push(
      signed(sk, {
        kind: 7,
        content: i % 4 ? "+" : "🔥",
        tags: [
          ["e", n.id],
          ["p", n.pubkey],
        ],
      }),
    );
  });
  // Each author deletes two of its own notes.
  keys.forEach((sk, a) => {
    const own = notes.filter((n) => n.pubkey === pubkeys[a]).slice(0, 2);
    const d = signed(sk, { kind: 5, created_at: t0 + 100, tags: own.map((n) => ["e", n.id]) });
    deletes.set(
      d.id,
      own.map((n) => n.id),
    );
    events.push(d);
  });
  return { events, word, deletes };
}

/** Sends everything over several pipelined connections; kills the relay after `killAfter` OKs. */
async function ingest(url: string, list: Event[], killAfter: number, kill: () => void) {
  const oks = new Map<string, boolean>();
  const sent = new Set<string>();
  let answered = 0;
  let killed = false;
  const lanes = Array.from({ length: CONNECTIONS }, (_, i) => list.filter((_, j) => j % CONNECTIONS === i));
  await Promise.all(
    lanes.map(
      (lane) =>
        new Promise<void>((done) => {
          const ws = new WebSocket(url);
          let next = 0;
          const send = () => {
            if (killed || next >= lane.length) return;
            const e = lane[next++]!;
            sent.add(e.id);
            ws.send(JSON.stringify(["EVENT", e]));
          };
          ws.onopen = () => {
            for (let i = 0; i < IN_FLIGHT; i++) send();
          };
          ws.onmessage = (m) => {
            const f = JSON.parse(String(m.data)) as unknown[];
            if (f[0] !== "OK") return;
            oks.set(f[1] as string, f[2] as boolean);
            if (++answered >= killAfter && !killed) {
              killed = true;
              kill();
            }
            send();
            if (next >= lane.length && [...lane].every((e) => oks.has(e.id))) ws.close();
          };
          ws.onclose = () => done();
          ws.onerror = () => done();
        }),
    ),
  );
  return { oks, sent };
}

/** Every entry of a database as [key, value] copies. */
const entries = (db: BinDb): [string, string][] =>
  Array.from(db.getRange({}), ({ key, value }) => [
    (key as Buffer).toString("hex"),
    (value as Buffer).toString("hex"),
  ]);

/** Search postings and REQ index entries that point at no stored event. */
function dangling(s: Store, gone: Set<number>): string[] {
  const out: string[] = [];
  const stored = (serial: number) => s.events.getBinary(serialKey(serial)) !== undefined;
  for (const { key, value } of s.derived
    .openDB({ name: "search_blocks", keyEncoding: "binary", encoding: "binary" })
    .getRange({}))
    for (const p of decodeBlock(value as Buffer))
      if (!gone.has(p.serial) && !stored(p.serial))
        out.push(`posting ${(key as Buffer).toString("hex")} → ${p.serial}`);
  for (const [name, db] of [
    ["pubkey", s.pubkey],
    ["kind", s.kind],
    ["pubkind", s.pubkind],
    ["tag", s.tag],
    ["time", s.time],
  ] as const)
    for (const k of allEntries(db)) if (!stored(keySerial(k))) out.push(`${name} entry → ${keySerial(k)}`);
  return out;
}

const CORPUS = corpus();

describe("kill -9 during heavy ingest", () => {
  for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
    test(`every acknowledged event survives, searchable and counted once (seed ${seed})`, async () => {
      const g = new Gen(seed);
      const list = g.shuffle([...CORPUS.events]);
      const dir = tempDir();
      // Odd seeds: the derived indexes apply nothing before the kill, so the restart replays
      // every event; even seeds: they apply as usual, so the kill lands between batches.
      const lazy = seed % 2 === 1;
      const first = await spawnRelay(
        dir,
        lazy
          ? {
              RELAY_CONSUMERS_INTERVAL_MS: "600000",
              RELAY_CONSUMERS_MAX_BATCH: "1000000",
              RELAY_CONSUMERS_IDLE_MS: "0",
            }
          : {},
      );
      const killAfter = Math.floor(list.length * (0.15 + (0.7 * g.int(1000)) / 1000));
      const { oks, sent } = await ingest(first.url, list, killAfter, () => first.proc.kill("SIGKILL"));
      expect(await first.proc.exited).not.toBe(0);
      expect(oks.size).toBeGreaterThanOrEqual(killAfter);
      if (lazy) {
        const s = openStore(dir);
        const behind = s.lastSerial - (readWatermark(s, "search")?.serial ?? 0);
        await closeStore(s);
        expect(behind).toBeGreaterThan(0);
      }

      const again = await spawnRelay(dir);
      const c = await RawClient.connect(again.url);
      const byId = new Map(list.map((e) => [e.id, e]));
      const acked = (id: string) => oks.get(id) === true;
      // A note named by a deletion that was sent may be gone (the deletion may have committed
      // before the kill); one named by an acknowledged deletion must be gone.
      const maybeDeleted = new Set<string>();
      const deleted = new Set<string>();
      for (const [d, targets] of CORPUS.deletes)
        for (const t of targets) {
          if (sent.has(d)) maybeDeleted.add(t);
          if (acked(d)) deleted.add(t);
        }
      const mustHave = [...oks.keys()].filter(
        (id) => acked(id) && !maybeDeleted.has(id) && [1, 7, 5].includes(byId.get(id)!.kind),
      );
      const served = new Set<string>();
      for (let i = 0; i < mustHave.length; i += 200)
        for (const id of await c.req("q", { ids: mustHave.slice(i, i + 200), limit: 500 })) served.add(id);
      expect(mustHave.filter((id) => !served.has(id))).toEqual([]);
      const gone = [...deleted].filter((id) => acked(id));
      expect(await c.req("deleted", { ids: gone })).toEqual([]);
      // Each acknowledged note is found by its own word; an acknowledged deletion's are not.
      // (One subscription id for all: a REQ with a known id replaces that subscription.)
      for (const id of mustHave.filter((id) => byId.get(id)!.kind === 1))
        expect([id, await c.req("q", { search: CORPUS.word.get(id) })]).toEqual([id, [id]]);
      for (const id of gone) expect(await c.req("q", { search: CORPUS.word.get(id) })).toEqual([]);
      // Replaceable kinds: nothing older than the newest acknowledged version is served.
      for (const kind of [0, 3])
        for (const pk of new Set(list.map((e) => e.pubkey))) {
          const newest = Math.max(
            -1,
            ...list.filter((e) => e.kind === kind && e.pubkey === pk && acked(e.id)).map((e) => e.created_at),
          );
          if (newest < 0) continue;
          const [id] = await c.req("q", { kinds: [kind], authors: [pk] });
          expect(byId.get(id!)!.created_at).toBeGreaterThanOrEqual(newest);
        }
      // Acknowledged reactions are found by their #e tag too.
      const reactions = mustHave.map((id) => byId.get(id)!).filter((e) => e.kind === 7);
      const byTag = new Set(await c.req("q", { "#e": reactions.map((e) => e.tags[0]![1]!), limit: 5000 }));
      expect(reactions.filter((e) => !byTag.has(e.id)).map((e) => e.id)).toEqual([]);
      c.close();
      again.proc.kill("SIGTERM");
      expect(await again.proc.exited).toBe(0);

      // `relay check` finds nothing; the log lists each event once; importing it again adds nothing.
      await checked(dir);
      const exp = await cli(["export", "--quiet", "--data", dir]);
      const exported = exp.out.split("\n").filter((l) => l !== "");
      const ids = exported.map((l) => (JSON.parse(l) as Event).id);
      expect(ids.length).toBe(new Set(ids).size);
      expect(ids.filter((id) => !byId.has(id))).toEqual([]);
      const file = join(tempDir(), "export.jsonl");
      writeFileSync(file, exp.out);
      const re = await cli(["import", file, "--no-verify", "--json", "--quiet", "--data", dir]);
      expect(re.code).toBe(0);
      expect(JSON.parse(re.out)).toMatchObject({ accepted: 0, duplicate: ids.length });

      // Counters as kept through the crash equal a count from scratch; nothing points at a
      // removed event.
      const s = openStore(dir);
      try {
        const config = loadConfig({ flags: { data: dir } });
        let d = openConsumers(s, config, { log: () => {} });
        const counters = () => [d.counters!.notes, d.counters!.pubkeys, d.counters!.relays].map(entries);
        const kept = counters();
        const goneSerials = new Set(Array.from(d.search!.gone.getKeys({}), (k) => readU64(k as Buffer, 0)));
        expect(dangling(s, goneSerials)).toEqual([]);
        await d.runner.stop();
        markStale(s, "counters");
        d = openConsumers(s, config, { log: () => {} });
        expect(counters()).toEqual(kept);
        await d.runner.stop();
      } finally {
        await closeStore(s);
      }
    }, 60_000);
  }
});
