// Access control over real WebSockets with nostr-tools as the client: NIP-42 AUTH (including
// SimplePool's automatic re-authentication), restricted kinds, NIP-70 protected events, NIP-13
// proof of work and the built-in write lists.
import { describe, expect, test } from "bun:test";
import { SimplePool } from "nostr-tools/pool";
import type { EventTemplate } from "nostr-tools/pure";
import { finalizeEvent, getPublicKey } from "nostr-tools/pure";
import { Relay } from "nostr-tools/relay";
import { newKey, now, RawClient, signed, startTestRelay } from "./harness.ts";

const signer = (sk: Uint8Array) => async (t: EventTemplate) => finalizeEvent(t, sk);

/**
 * The connection's challenge. A relay that requires nothing sends none until an answer is
 * auth-required:, so it is asked for as clients do: a REQ for a restricted kind (DMs).
 */
async function challengeOf(c: RawClient): Promise<string> {
  if (!c.frames.some((f) => f[0] === "AUTH")) c.send(["REQ", "want-auth", { kinds: [4] }]);
  return (await c.next((f) => f[0] === "AUTH"))[1] as string;
}

/** Answers the relay's challenge over a raw client. */
async function auth(c: RawClient, sk: Uint8Array, url: string, over: Partial<EventTemplate> = {}) {
  const challenge = await challengeOf(c);
  const e = finalizeEvent(
    {
      kind: 22242,
      created_at: now(),
      tags: [
        ["relay", url],
        ["challenge", challenge],
      ],
      content: "",
      ...over,
    },
    sk,
  );
  const from = c.frames.length;
  c.send(["AUTH", e]);
  return c.ok(e.id, from);
}

describe("NIP-42 AUTH", () => {
  test("with default settings a REQ for a restricted kind gets the challenge before its CLOSED, and a correct answer is accepted", async () => {
    const r = startTestRelay();
    const c = await RawClient.connect(r.url);
    expect(await c.req("notes", { kinds: [1] })).toEqual([]);
    c.send(["REQ", "dms", { kinds: [4] }]);
    await c.next((f) => f[0] === "CLOSED");
    expect(c.frames.map((f) => f[0])).toEqual(["EOSE", "AUTH", "CLOSED"]);
    expect(String(c.frames[2]![2])).toStartWith("auth-required: ");
    expect(await auth(c, newKey(), r.url)).toMatchObject(["OK", expect.any(String), true, ""]);
    c.close();
  });

  const wrong: [string, (url: string, challenge: string) => Partial<EventTemplate>][] = [
    [
      "a wrong challenge",
      (url) => ({
        tags: [
          ["relay", url],
          ["challenge", "nope"],
        ],
      }),
    ],
    [
      "another relay's URL",
      (_, ch) => ({
        tags: [
          ["relay", "wss://elsewhere.example"],
          ["challenge", ch],
        ],
      }),
    ],
    ["a stale created_at", () => ({ created_at: now() - 3600 })],
    ["the wrong kind", () => ({ kind: 1 })],
  ];
  for (const [what, over] of wrong) {
    test(`an answer with ${what} is refused with OK false invalid:`, async () => {
      const r = startTestRelay();
      const c = await RawClient.connect(r.url);
      const challenge = await challengeOf(c);
      const ok = await auth(c, newKey(), r.url, over(r.url, challenge));
      expect(ok[2]).toBe(false);
      expect(String(ok[3])).toStartWith("invalid: ");
      c.close();
    });
  }

  test("AUTH events are never stored or broadcast", async () => {
    const r = startTestRelay();
    const c = await RawClient.connect(r.url);
    await c.req("all", { limit: 0 });
    await auth(c, newKey(), r.url);
    expect(await c.req("kinds", { kinds: [22242] })).toEqual([]);
    expect(c.frames.filter((f) => f[0] === "EVENT").length).toBe(0);
    c.close();
  });

  test("a kind 22242 event sent with EVENT is refused invalid:, neither relayed to a subscriber nor stored", async () => {
    const r = startTestRelay();
    const watcher = await RawClient.connect(r.url);
    await watcher.req("w", { kinds: [22242] }, { kinds: [20001] });
    const c = await RawClient.connect(r.url);
    const e = finalizeEvent(
      {
        kind: 22242,
        created_at: now(),
        tags: [
          ["relay", r.url],
          ["challenge", await challengeOf(c)],
        ],
        content: "",
      },
      newKey(),
    );
    const ok = await c.publish(e);
    expect(ok[2]).toBe(false);
    expect(String(ok[3])).toStartWith("invalid: ");
    // An ephemeral event sent after it reaches the watcher; the AUTH event would have come first.
    const after = signed(newKey(), { kind: 20001 });
    expect((await c.publish(after))[2]).toBe(true);
    await watcher.next((f) => f[0] === "EVENT");
    expect(watcher.frames.filter((f) => f[0] === "EVENT").map((f) => (f[2] as { id: string }).id)).toEqual([
      after.id,
    ]);
    expect(await c.req("stored", { kinds: [22242] })).toEqual([]);
    expect(await c.req("by-id", { ids: [e.id] })).toEqual([]);
    for (const x of [watcher, c]) x.close();
  });

  test("with auth.writes, nostr-tools' pool authenticates by itself after auth-required and publishes", async () => {
    const r = startTestRelay({ "auth.writes": "true" });
    const sk = newKey();
    const raw = await RawClient.connect(r.url);
    const refused = await raw.publish(signed(sk));
    expect(refused[2]).toBe(false);
    expect(String(refused[3])).toStartWith("auth-required: ");
    raw.close();

    const pool = new SimplePool();
    const e = signed(sk, { content: "after auth" });
    const [reason] = await Promise.all(pool.publish([r.url], e, { onauth: signer(sk) }));
    expect(reason).toBe("");
    pool.close([r.url]);
  });

  test("with auth.reads, nostr-tools' pool re-subscribes by itself after AUTH and gets the events", async () => {
    const r = startTestRelay({ "auth.reads": "true" });
    const sk = newKey();
    const e = signed(sk, { content: "members only" });
    const pub = new SimplePool();
    await Promise.all(pub.publish([r.url], e));
    pub.close([r.url]);
    const pool = new SimplePool();
    const got: string[] = [];
    await new Promise<void>((resolve) =>
      pool.subscribeEose(
        [r.url],
        { authors: [getPublicKey(sk)] },
        {
          onevent: (x) => got.push(x.id),
          onclose: () => resolve(),
          onauth: signer(newKey()),
        },
      ),
    );
    expect(got).toEqual([e.id]);
    pool.close([r.url]);
  });

  test("a deletion published through nostr-tools removes the event for nostr-tools readers", async () => {
    const r = startTestRelay();
    const sk = newKey();
    const pool = new SimplePool();
    const note = signed(sk, { content: "oops" });
    await Promise.all(pool.publish([r.url], note));
    await Promise.all(pool.publish([r.url], signed(sk, { kind: 5, tags: [["e", note.id]] })));
    expect(await pool.querySync([r.url], { ids: [note.id] })).toEqual([]);
    await expect(Promise.all(pool.publish([r.url], note))).rejects.toThrow(/^blocked: /);
    pool.close([r.url]);
  });

  test("with auth.reads, a REQ before AUTH is CLOSED auth-required: and works after", async () => {
    const r = startTestRelay({ "auth.reads": "true" });
    const c = await RawClient.connect(r.url);
    c.send(["REQ", "r", {}]);
    const closed = await c.next((f) => f[0] === "CLOSED");
    expect(String(closed[2])).toStartWith("auth-required: ");
    await auth(c, newKey(), r.url);
    expect(await c.req("r2", { limit: 1 })).toEqual([]);
    c.close();
  });
});

describe("restricted kinds (4 and 1059 by default)", () => {
  test("a DM is served, stored or live, only to its author or p-tagged recipient", async () => {
    const r = startTestRelay();
    const author = newKey();
    const recipient = newKey();
    const dm = signed(author, { kind: 4, tags: [["p", getPublicKey(recipient)]], content: "secret" });
    const pub = await RawClient.connect(r.url);
    expect((await pub.publish(dm))[2]).toBe(true);

    const stranger = await RawClient.connect(r.url);
    const closed = await stranger.req("dm", { kinds: [4] });
    expect(closed).toEqual([]);
    expect(String(stranger.frames.find((f) => f[0] === "CLOSED")?.[2])).toStartWith("auth-required: ");
    expect(await stranger.req("any", {})).toEqual([]);
    await auth(stranger, newKey(), r.url);
    expect(await stranger.req("after", { kinds: [4] })).toEqual([]);
    stranger.send(["COUNT", "n", { kinds: [4] }]);
    expect((await stranger.next((f) => f[0] === "COUNT"))[2]).toEqual({ count: 0 });

    const reader = await RawClient.connect(r.url);
    await auth(reader, recipient, r.url);
    expect(await reader.req("mine", { kinds: [4] })).toEqual([dm.id]);
    await reader.req("live", { kinds: [4], limit: 0 });
    await stranger.req("live", { limit: 0 });
    const dm2 = signed(author, { kind: 4, tags: [["p", getPublicKey(recipient)]], content: "again" });
    await pub.publish(dm2);
    await reader.next((f) => f[0] === "EVENT" && f[1] === "live");
    await Bun.sleep(50);
    expect(stranger.frames.filter((f) => f[0] === "EVENT").length).toBe(0);
    for (const x of [pub, stranger, reader]) x.close();
  });

  test("a count of a tag leaves out the DMs a reader may not see, and counts them for their author", async () => {
    const r = startTestRelay();
    const author = newKey();
    const pub = await RawClient.connect(r.url);
    const notes = [0, 1].map((i) => signed(newKey(), { content: `note ${i}`, tags: [["t", "topic"]] }));
    for (const n of notes) expect((await pub.publish(n))[2]).toBe(true);
    const countOf = async (c: RawClient, id: string, f: object) => {
      c.send(["COUNT", id, f]);
      return (await c.next((x) => x[0] === "COUNT" && x[1] === id))[2];
    };
    // With no restricted kind stored anything a tag's range holds may be counted.
    const stranger = await RawClient.connect(r.url);
    expect(await countOf(stranger, "a", { "#t": ["topic"] })).toEqual({ count: 2 });
    const dm = signed(author, {
      kind: 4,
      tags: [
        ["t", "topic"],
        ["p", getPublicKey(newKey())],
      ],
      content: "x",
    });
    expect((await pub.publish(dm))[2]).toBe(true);
    expect(await countOf(stranger, "b", { "#t": ["topic"] })).toEqual({ count: 2 });
    const mine = await RawClient.connect(r.url);
    await auth(mine, author, r.url);
    expect(await countOf(mine, "c", { "#t": ["topic"] })).toEqual({ count: 3 });
    for (const x of [pub, stranger, mine]) x.close();
  });

  test("a restricted searchable kind is hidden from a search, stored or not yet indexed", async () => {
    const r = startTestRelay({ "auth.restrictedKinds": "4,1059,30023" });
    const author = newKey();
    const recipient = newKey();
    const draft = signed(author, {
      kind: 30023,
      tags: [
        ["d", "x"],
        ["p", getPublicKey(recipient)],
        ["title", "quarterly plans"],
      ],
      content: "private quarterly plans",
    });
    const note = signed(author, { kind: 1, content: "public quarterly plans" });
    const pub = await RawClient.connect(r.url);
    for (const e of [draft, note]) expect((await pub.publish(e))[2]).toBe(true);
    const stranger = await RawClient.connect(r.url);
    const reader = await RawClient.connect(r.url);
    await auth(reader, recipient, r.url);
    // Right after OK (the tail), then once the index covers both.
    for (const round of [0, 1]) {
      if (round === 1) await r.ctx.consumers.runner.settle();
      expect(await stranger.req(`s${round}`, { search: "quarterly plans" })).toEqual([note.id]);
      expect((await reader.req(`r${round}`, { search: "quarterly plans" })).sort()).toEqual(
        [draft.id, note.id].sort(),
      );
      stranger.send(["COUNT", `c${round}`, { search: "quarterly plans" }]);
      expect((await stranger.next((f) => f[0] === "COUNT" && f[1] === `c${round}`))[2]).toEqual({ count: 1 });
    }
    for (const x of [pub, stranger, reader]) x.close();
  });
});

describe("NIP-70 protected events", () => {
  test('an event with a ["-"] tag is accepted only from its authenticated author', async () => {
    const r = startTestRelay();
    const sk = newKey();
    const rel = await Relay.connect(r.url);
    const e = signed(sk, { tags: [["-"]] });
    await expect(rel.publish(e)).rejects.toThrow(/^auth-required: /);
    await rel.auth(signer(newKey()));
    await expect(rel.publish(e)).rejects.toThrow(/^auth-required: /);
    rel.close();
    // The refusal carries the challenge, as it does for any client that has not authenticated.
    const author = await Relay.connect(r.url);
    await expect(author.publish(e)).rejects.toThrow(/^auth-required: /);
    await author.auth(signer(sk));
    expect(await author.publish(e)).toBe("");
    author.close();
  });
});

describe("write policy", () => {
  test("NIP-13: events below the minimum difficulty are refused with pow:", async () => {
    const r = startTestRelay({ "pow.minDifficulty": "8" });
    const c = await RawClient.connect(r.url);
    const sk = newKey();
    const ok = await c.publish(signed(sk));
    // An id with 8 leading zero bits is possible but rare; mine one to check acceptance.
    let mined = signed(sk, { tags: [["nonce", "0", "8"]] });
    for (let n = 1; !mined.id.startsWith("00"); n++)
      mined = signed(sk, { tags: [["nonce", String(n), "8"]] });
    if (!ok[1]?.toString().startsWith("00")) expect(String(ok[3])).toStartWith("pow: ");
    expect((await c.publish(mined))[2]).toBe(true);
    const info = (await (
      await fetch(r.url.replace("ws", "http"), { headers: { Accept: "application/nostr+json" } })
    ).json()) as { limitation: { min_pow_difficulty: number }; supported_nips: number[] };
    expect(info.limitation.min_pow_difficulty).toBe(8);
    expect(info.supported_nips).toContain(13);
    c.close();
  });

  test("pubkey and kind lists refuse with blocked: or restricted:", async () => {
    const good = newKey();
    const bad = newKey();
    const r = startTestRelay({
      "policy.pubkeyDeny": getPublicKey(bad),
      "policy.kindDeny": "7",
      "policy.kindAllow": "1,7,62",
    });
    const c = await RawClient.connect(r.url);
    expect((await c.publish(signed(good)))[2]).toBe(true);
    expect(String((await c.publish(signed(bad)))[3])).toStartWith("blocked: ");
    expect(String((await c.publish(signed(good, { kind: 7 })))[3])).toStartWith("blocked: ");
    expect(String((await c.publish(signed(good, { kind: 30023 })))[3])).toStartWith("blocked: ");
    // A request to vanish is honoured whatever the lists say.
    expect((await c.publish(signed(bad, { kind: 62, tags: [["relay", "ALL_RELAYS"]] })))[2]).toBe(true);
    c.close();
  });

  test("an allow list admits only the listed pubkeys", async () => {
    const good = newKey();
    const r = startTestRelay({ "policy.pubkeyAllow": getPublicKey(good) });
    const c = await RawClient.connect(r.url);
    expect((await c.publish(signed(good)))[2]).toBe(true);
    expect(String((await c.publish(signed(newKey())))[3])).toStartWith("restricted: ");
    c.close();
  });
});
