// What the crash tests check after a restart, and the corpus the data-command crash tests load.
// The corpus is hashed but not signed (the commands run with --no-verify, as for one's own
// dumps): thousands of events cost milliseconds, and the store treats them like any others.
import { expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Event } from "nostr-tools/pure";
import { getEventHash } from "nostr-tools/pure";
import { Gen } from "./gen.ts";
import { RawClient } from "./harness.ts";
import { cli } from "./procs.ts";

export interface DataCorpus {
  events: Event[];
  byId: Map<string, Event>;
  authors: string[];
  /** search word → the note ids holding it (each note holds one group word) */
  groups: Map<string, string[]>;
  /** the corpus as JSONL, in `events` order */
  file: string;
}

const GROUPS = 24;

/** Notes (each with a group word for search) and reactions naming a note (e and p tags). */
export function dataCorpus(dir: string, seed: number, authors = 16, notesEach = 90): DataCorpus {
  const g = new Gen(seed);
  const pubkeys = Array.from({ length: authors }, (_, i) =>
    (seed * 1000 + i + 1).toString(16).padStart(64, "0"),
  );
  const t0 = 1_700_000_000;
  const events: Event[] = [];
  const groups = new Map<string, string[]>();
  const make = (
    pubkey: string,
    kind: number,
    created_at: number,
    tags: string[][],
    content: string,
  ): Event => {
    const e = { pubkey, kind, created_at, tags, content };
    return { ...e, id: getEventHash(e), sig: "00".repeat(64) } as Event;
  };
  const notes: Event[] = [];
  pubkeys.forEach((pk, a) => {
    for (let i = 0; i < notesEach; i++) {
      const word = `crashgroup${g.int(GROUPS)}`;
      const n = make(pk, 1, t0 + a * 1000 + i, [], `note ${a}/${i} about ${word} and more`);
      notes.push(n);
      groups.set(word, [...(groups.get(word) ?? []), n.id]);
    }
  });
  events.push(...g.shuffle(notes));
  for (let i = 0; i < notes.length / 2; i++) {
    const target = g.pick(notes);
    const pk = g.pick(pubkeys);
    events.push(
      make(
        pk,
        7,
        target.created_at + 1 + g.int(100),
        [
          ["e", target.id],
          ["p", target.pubkey],
        ],
        i % 3 ? "+" : "🔥",
      ),
    );
  }
  const file = join(dir, "corpus.jsonl");
  writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
  return { events, byId: new Map(events.map((e) => [e.id, e])), authors: pubkeys, groups, file };
}

const chunks = <T>(xs: readonly T[], n: number): T[][] =>
  Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

const sorted = (xs: Iterable<string>): string[] => [...xs].sort();

/**
 * The events of `corpus` the relay at `url` (on `dir`) holds, after checking that its log and
 * every index agree on them: `relay check` finds nothing, `relay export` lists each once, and REQ by ids, by author, by kind,
 * by `#e` tag, search and COUNT each find exactly that set (no more, no less).
 */
export async function agreeing(url: string, dir: string, corpus: DataCorpus): Promise<Set<string>> {
  await checked(dir);
  const exp = await cli(["export", "--quiet", "--data", dir]);
  expect(exp.code).toBe(0);
  const lines = exp.out.split("\n").filter((l) => l !== "");
  const exported = lines.map((l) => (JSON.parse(l) as Event).id);
  expect(exported.length).toBe(new Set(exported).size);
  expect(exported.filter((id) => !corpus.byId.has(id))).toEqual([]);
  const present = new Set(exported);
  const have = (pred: (e: Event) => boolean) =>
    sorted(corpus.events.filter((e) => present.has(e.id) && pred(e)).map((e) => e.id));

  const c = await RawClient.connect(url);
  try {
    const byIds: string[] = [];
    for (const part of chunks([...corpus.byId.keys()], 1000))
      byIds.push(...(await c.req("q", { ids: part, limit: 5000 })));
    // Each check is labelled, so a failure names the index that disagrees.
    expect(["ids", sorted(byIds)]).toEqual(["ids", sorted(present)]);
    for (const a of corpus.authors)
      expect([`author ${a}`, sorted(await c.req("q", { authors: [a], limit: 5000 }))]).toEqual([
        `author ${a}`,
        have((e) => e.pubkey === a),
      ]);
    expect(["kind 7", sorted(await c.req("q", { kinds: [7], limit: 5000 }))]).toEqual([
      "kind 7",
      have((e) => e.kind === 7),
    ]);
    const notes = corpus.events.filter((e) => e.kind === 1).map((e) => e.id);
    for (const part of chunks(notes, 500)) {
      const targets = new Set(part);
      expect(["#e", sorted(await c.req("q", { "#e": part, limit: 5000 }))]).toEqual([
        "#e",
        have((e) => e.kind === 7 && targets.has(e.tags[0]![1]!)),
      ]);
    }
    for (const [word, ids] of corpus.groups)
      expect([word, sorted(await c.req("q", { search: word, limit: 5000 }))]).toEqual([
        word,
        sorted(ids.filter((id) => present.has(id))),
      ]);
    c.send(["COUNT", "n", { kinds: [1] }]);
    const n = await c.next((f) => f[0] === "COUNT" && f[1] === "n");
    expect(["COUNT", (n[2] as { count: number }).count]).toEqual(["COUNT", have((e) => e.kind === 1).length]);
  } finally {
    c.close();
  }
  return present;
}

/** Imports the corpus file; returns the summary (--json). */
export async function importFile(
  dir: string,
  file: string,
): Promise<{ accepted: number; duplicate: number }> {
  const r = await cli(["import", file, "--no-verify", "--json", "--quiet", "--data", dir]);
  expect([r.code, r.err]).toEqual([0, ""]);
  return JSON.parse(r.out) as { accepted: number; duplicate: number };
}

/** `relay check` finds nothing wrong in `dir` (safe beside a running relay). */
export async function checked(dir: string): Promise<void> {
  const r = await cli(["check", "--json", "--data", dir]);
  const rep = JSON.parse(r.out || "{}") as { ok?: boolean; problems?: unknown };
  expect([r.code, rep.ok, rep.problems]).toEqual([0, true, {}]);
}
