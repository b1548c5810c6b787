// Switching the API: api.enabled=false answers 404 under /v0 and /v1; search.enabled=false makes
// /v0/search say so; auth.reads keeps the API closed; and counters missing from a store (events
// written while the API was off) are built from the stored events at the next start.
import { describe, expect, test } from "bun:test";
import * as nip19 from "nostr-tools/nip19";
import { getPublicKey } from "nostr-tools/pure";
import type { TestRelay } from "./harness.ts";
import { newKey, now, RawClient, signed, startTestRelay, tempDir } from "./harness.ts";

const get = (r: TestRelay, path: string) => fetch(`${r.url.replace("ws://", "http://")}${path}`);

describe("configuration", () => {
  test("api.enabled = false: every API path is a JSON 404", async () => {
    const r = startTestRelay({ "api.enabled": "false" });
    for (const path of ["/v0/search?q=x", "/v0/trending/notes", `/v0/p/${"a".repeat(64)}`, "/v1/online"]) {
      const res = await get(r, path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: "not found: the API is disabled" });
    }
    expect(r.ctx.store.indexers.map((ix) => ix.name)).not.toContain("api-counters");
  });

  test("search.enabled = false: /v0/search says search is disabled", async () => {
    const r = startTestRelay({ "search.enabled": "false" });
    const res = await get(r, "/v0/search?q=hello");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "not found: search is disabled on this relay" });
  });

  test("auth.reads = true: the API is refused, as unauthenticated REQs are", async () => {
    const r = startTestRelay({ "auth.reads": "true" });
    const res = await get(r, "/v0/trending/notes");
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      error: "restricted: this relay requires NIP-42 authentication to read",
    });
  });
});

describe("counters over existing data", () => {
  test("events stored while the API was off are counted at the next start with it on", async () => {
    const dir = tempDir();
    const author = newKey();
    const pk = getPublicKey(author);
    const t = now();
    const note = signed(author, { created_at: t - 10, content: "counted later" });
    const likes = [newKey(), newKey(), newKey()].map((k, i) =>
      signed(k, { kind: 7, created_at: t - 5 + i, content: i === 2 ? "🔥" : "+", tags: [["e", note.id]] }),
    );
    const follower = signed(newKey(), { kind: 3, created_at: t - 5, tags: [["p", pk]] });

    const off = startTestRelay({ "api.enabled": "false" }, dir);
    const c = await RawClient.connect(off.url);
    for (const e of [note, ...likes, follower]) expect((await c.publish(e))[2]).toBe(true);
    c.close();
    await off.stop();

    // The relay's log (src/log.ts) writes info lines to stdout.
    const lines: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => lines.push(String(chunk)) > 0) as typeof write;
    let on: TestRelay;
    try {
      on = startTestRelay({}, dir);
    } finally {
      process.stdout.write = write;
    }
    expect(
      lines.filter((l) => / info +counters: built from 5 stored events in \d+ ms\n$/.test(l)),
    ).toHaveLength(1);
    const trending = (await (await get(on, "/v0/trending/notes")).json()) as {
      notes: { event: { id: string }; counts: unknown }[];
    };
    expect(trending.notes.map((n) => [n.event.id, n.counts])).toEqual([
      [note.id, { likes: 2, reactions: 1, reposts: 0, replies: 0, zaps: 0, zap_sats: 0 }],
    ]);
    const profile = (await (await get(on, `/v0/p/${nip19.npubEncode(pk)}`)).json()) as {
      followers: number;
      notes: { count: number };
    };
    expect([profile.followers, profile.notes.count]).toEqual([1, 1]);
  });
});
