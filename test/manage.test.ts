// NIP-86 management over real HTTP, with NIP-98 authorization built by hand so each check can
// be broken on its own; every method's effect is observed the way clients see it (EVENT's OK,
// REQ, a WebSocket connect, NIP-11), and the lists are read back after a restart.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { npubEncode } from "nostr-tools/nip19";
import { finalizeEvent, getPublicKey } from "nostr-tools/pure";
import { ConfigError, loadConfig } from "../src/config/load.ts";
import { callMethod } from "../src/manage/methods.ts";
import { newKey, now, RawClient, signed, startTestRelay, type TestRelay, tempDir } from "./harness.ts";
import { cli } from "./procs.ts";

// Real servers and processes on a shared 2-core machine: wait generously, never on a clock.
setDefaultTimeout(60_000);

const admin = newKey();
const adminPk = getPublicKey(admin);

const started = (flags: Record<string, string> = {}, dir?: string): TestRelay =>
  startTestRelay({ "management.admins": npubEncode(adminPk), ...flags }, dir);

const httpUrl = (r: TestRelay): string => `${r.url.replace("ws://", "http://")}/`;
const sha256 = (s: string): string => new Bun.CryptoHasher("sha256").update(s).digest("hex");

interface CallOptions {
  key?: Uint8Array;
  u?: string;
  method?: string;
  payload?: string | null;
  createdAt?: number;
  kind?: number;
  /** changes the signed event after signing */
  tamper?: (e: { sig: string; content: string }) => void;
  /** the whole Authorization header (null: none) */
  header?: string | null;
  contentType?: string;
  body?: string;
}

async function call(
  r: TestRelay,
  method: string,
  params: unknown[] = [],
  o: CallOptions = {},
): Promise<{ status: number; body: { result?: unknown; error?: unknown } }> {
  const body = o.body ?? JSON.stringify({ method, params });
  const tags = [
    ["u", o.u ?? httpUrl(r)],
    ["method", o.method ?? "POST"],
  ];
  if (o.payload !== null) tags.push(["payload", o.payload ?? sha256(body)]);
  const ev = finalizeEvent(
    { kind: o.kind ?? 27235, created_at: o.createdAt ?? now(), tags, content: "" },
    o.key ?? admin,
  );
  o.tamper?.(ev);
  const header = o.header !== undefined ? o.header : `Nostr ${btoa(JSON.stringify(ev))}`;
  const headers: Record<string, string> = { "Content-Type": o.contentType ?? "application/nostr+json+rpc" };
  if (header !== null) headers.Authorization = header;
  const res = await fetch(httpUrl(r), { method: "POST", headers, body });
  return { status: res.status, body: (await res.json()) as { result?: unknown; error?: unknown } };
}

/** A successful call's result (the test fails on an error). */
async function ok(r: TestRelay, method: string, params: unknown[] = []): Promise<unknown> {
  const got = await call(r, method, params);
  expect(got).toEqual({ status: 200, body: { result: got.body.result } });
  return got.body.result;
}

async function nip11(r: TestRelay): Promise<Record<string, unknown>> {
  const res = await fetch(httpUrl(r), { headers: { Accept: "application/nostr+json" } });
  return (await res.json()) as Record<string, unknown>;
}

describe("management.admins", () => {
  test("takes hex (any case) or npub and keeps hex; anything else is a ConfigError naming the key", () => {
    const other = getPublicKey(newKey());
    const c = loadConfig({ flags: { "management.admins": `${npubEncode(adminPk)},${other.toUpperCase()}` } });
    expect(c["management.admins"]).toEqual([adminPk, other]);
    expect(() => loadConfig({ flags: { "management.admins": "npub1nonsense" } })).toThrow(ConfigError);
    expect(() => loadConfig({ flags: { "management.admins": "abc" } })).toThrow(
      "management.admins: 'abc' is neither 64 hex characters nor a valid npub",
    );
  });
});

describe("NIP-98 authorization", () => {
  const r = started({ publicUrl: "wss://relay.example.com" });

  test("a well-formed call from an admin is answered, for each URL naming the relay", async () => {
    const port = r.server.port;
    for (const u of [
      httpUrl(r),
      `http://127.0.0.1:${port}`,
      `http://LOCALHOST:${port}/`,
      `ws://127.0.0.1:${port}`,
      "https://relay.example.com",
      "wss://relay.example.com/",
    ]) {
      const got = await call(r, "listbannedpubkeys", [], { u });
      expect({ u, ...got }).toEqual({ u, status: 200, body: { result: [] } });
    }
  });

  const cases: [string, CallOptions, string][] = [
    ["no Authorization header", { header: null }, "missing Authorization"],
    ["another scheme", { header: "Bearer abc" }, "Nostr scheme"],
    ["a token that is not base64 JSON", { header: "Nostr %%%" }, "base64"],
    ["a key not in management.admins", { key: newKey() }, "may not manage"],
    ["a u tag naming another relay", { u: "https://other.example.com/" }, "u tag"],
    ["a u tag with another port", { u: "http://127.0.0.1:1/" }, "u tag"],
    ["a method tag that is not POST", { method: "GET" }, "method tag"],
    ["a payload tag that is not the body's hash", { payload: sha256("something else") }, "payload tag"],
    ["no payload tag", { payload: null }, "payload tag"],
    ["created_at two minutes ago", { createdAt: now() - 120 }, "created_at"],
    ["created_at two minutes ahead", { createdAt: now() + 120 }, "created_at"],
    ["another kind", { kind: 1 }, "kind 27235"],
    [
      "a bad signature",
      {
        tamper: (e) => {
          e.sig = (e.sig[0] === "0" ? "1" : "0") + e.sig.slice(1);
        },
      },
      "signature",
    ],
    [
      "an id that does not match",
      {
        tamper: (e) => {
          e.content = "changed";
        },
      },
      "id",
    ],
  ];
  for (const [what, o, words] of cases)
    test(`${what}: 401 with a JSON error`, async () => {
      const got = await call(r, "banpubkey", ["a".repeat(64)], o);
      expect(got.status).toBe(401);
      expect(Object.keys(got.body)).toEqual(["error"]);
      expect(String(got.body.error)).toContain(words);
      // Nothing was changed.
      expect(await ok(r, "listbannedpubkeys")).toEqual([]);
    });

  test("a relay with no admins refuses every call, and does not list NIP-86", async () => {
    const off = started({ "management.admins": "" });
    const got = await call(off, "supportedmethods");
    expect(got).toEqual({
      status: 401,
      body: { error: "management is off: no pubkey is listed in management.admins" },
    });
    expect((await nip11(off)).supported_nips).not.toContain(86);
    expect((await nip11(r)).supported_nips).toContain(86);
  });

  test("a browser may send NIP-86 calls: the preflight allows POST and Authorization", async () => {
    const res = await fetch(httpUrl(r), {
      method: "OPTIONS",
      headers: {
        Origin: "https://admin.example.com",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    expect(res.headers.get("access-control-allow-headers")).toStartWith("Authorization");
    const answered = await call(r, "listblockedips");
    expect(answered.status).toBe(200);
  });

  test("a POST without the NIP-86 content type is still not allowed", async () => {
    const res = await fetch(httpUrl(r), { method: "POST", body: "{}" });
    expect(res.status).toBe(405);
  });

  test("unknown methods, bad params and bad bodies get a result of null and an error", async () => {
    expect((await call(r, "nosuchmethod")).body).toEqual({
      result: null,
      error: "unknown method 'nosuchmethod'; supportedmethods lists them",
    });
    for (const [m, p] of [
      ["banpubkey", ["xyz"]],
      ["banpubkey", []],
      ["banevent", [42]],
      ["allowkind", ["one"]],
      ["allowkind", [70000]],
      ["blockip", ["300.1.1.1"]],
      ["changerelayicon", ["not a url"]],
      ["changerelayname", [7]],
      ["banpubkey", ["b".repeat(64), 12]],
    ] as [string, unknown[]][]) {
      const got = await call(r, m, p);
      expect({ m, p, status: got.status, result: got.body.result }).toEqual({
        m,
        p,
        status: 200,
        result: null,
      });
      expect(typeof got.body.error).toBe("string");
    }
    const notJson = await call(r, "", [], { body: "not json" });
    expect(notJson).toEqual({ status: 400, body: { result: null, error: "the body is not JSON" } });
    expect(await ok(r, "listbannedpubkeys")).toEqual([]);
  });
});

describe("each method takes effect at once", () => {
  const r = started();

  test("supportedmethods names every other method", async () => {
    expect(((await ok(r, "supportedmethods")) as string[]).sort()).toEqual(
      [
        "banpubkey",
        "unbanpubkey",
        "listbannedpubkeys",
        "allowpubkey",
        "unallowpubkey",
        "listallowedpubkeys",
        "banevent",
        "unbanevent",
        "listbannedevents",
        "allowevent",
        "unallowevent",
        "listallowedevents",
        "listeventsneedingmoderation",
        "changerelayname",
        "changerelaydescription",
        "changerelayicon",
        "allowkind",
        "disallowkind",
        "listallowedkinds",
        "listdisallowedkinds",
        "blockip",
        "unblockip",
        "listblockedips",
      ].sort(),
    );
    expect(await ok(r, "listeventsneedingmoderation")).toEqual([]);
  });

  test("banpubkey: its events stop being served and its EVENTs are refused; unbanpubkey lifts it", async () => {
    const spammer = newKey();
    const other = newKey();
    const c = await RawClient.connect(r.url);
    const mine = [signed(spammer, { content: "a" }), signed(spammer, { kind: 30023, tags: [["d", "x"]] })];
    const theirs = signed(other, { content: "b" });
    for (const e of [...mine, theirs]) expect((await c.publish(e))[2]).toBe(true);
    const authors = [getPublicKey(spammer), getPublicKey(other)];
    expect((await c.req("before", { authors })).sort()).toEqual([...mine.map((e) => e.id), theirs.id].sort());

    expect(await ok(r, "banpubkey", [getPublicKey(spammer), "spam"])).toBe(true);
    expect(await c.req("after", { authors })).toEqual([theirs.id]);
    expect(await c.req("by-id", { ids: mine.map((e) => e.id) })).toEqual([]);
    const again = signed(spammer, { content: "more" });
    expect(await c.publish(again)).toEqual([
      "OK",
      again.id,
      false,
      "blocked: this pubkey is banned from this relay",
    ]);
    // Not even a request to vanish: there is nothing left of it to remove.
    const vanish = signed(spammer, { kind: 62, tags: [["relay", "ALL_RELAYS"]] });
    expect((await c.publish(vanish))[2]).toBe(false);
    expect(await ok(r, "listbannedpubkeys")).toEqual([{ pubkey: getPublicKey(spammer), reason: "spam" }]);

    expect(await ok(r, "unbanpubkey", [getPublicKey(spammer)])).toBe(true);
    expect(await ok(r, "listbannedpubkeys")).toEqual([]);
    const later = signed(spammer, { content: "forgiven" });
    expect((await c.publish(later))[2]).toBe(true);
    // Lifting a ban does not bring back what it removed.
    expect((await c.req("unbanned", { authors: [getPublicKey(spammer)] })).sort()).toEqual([later.id]);
    c.close();
  });

  test("banevent removes the event and refuses it when sent again; allowevent lifts the ban", async () => {
    const k = newKey();
    const c = await RawClient.connect(r.url);
    const bad = signed(k, { content: "bad" });
    const fine = signed(k, { content: "fine" });
    for (const e of [bad, fine]) expect((await c.publish(e))[2]).toBe(true);
    expect(await ok(r, "banevent", [bad.id, "illegal"])).toBe(true);
    expect(await c.req("a", { authors: [getPublicKey(k)] })).toEqual([fine.id]);
    expect(await c.publish(bad)).toEqual([
      "OK",
      bad.id,
      false,
      "blocked: this event is banned from this relay",
    ]);
    expect(await ok(r, "listbannedevents")).toEqual([{ id: bad.id, reason: "illegal" }]);

    expect(await ok(r, "allowevent", [bad.id])).toBe(true);
    expect(await ok(r, "listbannedevents")).toEqual([]);
    expect(await ok(r, "listallowedevents")).toEqual([{ id: bad.id }]);
    expect((await c.publish(bad))[2]).toBe(true);
    expect((await c.req("b", { authors: [getPublicKey(k)] })).sort()).toEqual([bad.id, fine.id].sort());
    expect(await ok(r, "unallowevent", [bad.id])).toBe(true);
    expect(await ok(r, "listallowedevents")).toEqual([]);
    c.close();
  });

  test("allowpubkey: with an allow list only its pubkeys may publish; unallowpubkey empties it", async () => {
    const friend = newKey();
    const stranger = newKey();
    const c = await RawClient.connect(r.url);
    expect(await ok(r, "allowpubkey", [npubEncode(getPublicKey(friend)), "friend"])).toBe(true);
    expect(await ok(r, "listallowedpubkeys")).toEqual([{ pubkey: getPublicKey(friend), reason: "friend" }]);
    expect((await nip11(r)).limitation).toMatchObject({ restricted_writes: true });
    const a = signed(friend);
    const b = signed(stranger);
    expect((await c.publish(a))[2]).toBe(true);
    expect(await c.publish(b)).toEqual([
      "OK",
      b.id,
      false,
      "restricted: this pubkey is not allowed to publish here",
    ]);
    // An event allowed through NIP-86 passes the allow list.
    expect(await ok(r, "allowevent", [b.id])).toBe(true);
    expect((await c.publish(b))[2]).toBe(true);
    expect(await ok(r, "unallowevent", [b.id])).toBe(true);
    // Banning an allowed pubkey takes it off the allow list (NIP-86).
    expect(await ok(r, "banpubkey", [getPublicKey(friend)])).toBe(true);
    expect(await ok(r, "listallowedpubkeys")).toEqual([]);
    expect(await ok(r, "allowpubkey", [getPublicKey(friend)])).toBe(true);
    expect(await ok(r, "listbannedpubkeys")).toEqual([]);
    expect(await ok(r, "unallowpubkey", [getPublicKey(friend)])).toBe(true);
    expect(await ok(r, "listallowedpubkeys")).toEqual([]);
    expect((await nip11(r)).limitation).toMatchObject({ restricted_writes: false });
    const c2 = signed(stranger, { content: "now anyone" });
    expect((await c.publish(c2))[2]).toBe(true);
    c.close();
  });

  test("allowkind and disallowkind limit the kinds accepted, and undo each other", async () => {
    const k = newKey();
    const c = await RawClient.connect(r.url);
    const refused = (e: { id: string; kind: number }) => [
      "OK",
      e.id,
      false,
      `blocked: kind ${e.kind} is not accepted here`,
    ];
    expect(await ok(r, "allowkind", [1])).toBe(true);
    expect(await ok(r, "listallowedkinds")).toEqual([1]);
    const note = signed(k, { kind: 1 });
    const reaction = signed(k, { kind: 7 });
    expect((await c.publish(note))[2]).toBe(true);
    expect(await c.publish(reaction)).toEqual(refused(reaction));
    expect(await ok(r, "disallowkind", [1])).toBe(true);
    expect(await ok(r, "listallowedkinds")).toEqual([]);
    expect(await ok(r, "listdisallowedkinds")).toEqual([]);
    expect((await c.publish(reaction))[2]).toBe(true);
    expect(await ok(r, "disallowkind", [7])).toBe(true);
    expect(await ok(r, "listdisallowedkinds")).toEqual([7]);
    const reaction2 = signed(k, { kind: 7, content: "+" });
    expect(await c.publish(reaction2)).toEqual(refused(reaction2));
    expect((await c.publish(signed(k, { kind: 1, content: "still fine" })))[2]).toBe(true);
    expect(await ok(r, "allowkind", ["7"])).toBe(true);
    expect(await ok(r, "listdisallowedkinds")).toEqual([]);
    expect((await c.publish(reaction2))[2]).toBe(true);
    c.close();
  });

  test("blockip closes open connections from the address and refuses new ones; unblockip lifts it", async () => {
    const c = await RawClient.connect(r.url);
    expect(await ok(r, "blockip", ["10.9.8.7", "elsewhere"])).toBe(true);
    // Another address: connections from here still work.
    const still = await RawClient.connect(r.url);
    still.close();
    expect(await ok(r, "blockip", ["127.0.0.1", "abuse"])).toBe(true);
    const deadline = Date.now() + 30_000;
    while (!c.closed && Date.now() < deadline) await Bun.sleep(20);
    expect(c.closed?.code).toBe(1008);
    expect(RawClient.connect(r.url)).rejects.toThrow("cannot connect");
    const upgrade = await fetch(httpUrl(r), { headers: { Upgrade: "websocket", Connection: "Upgrade" } });
    expect(upgrade.status).toBe(403);
    expect(await upgrade.text()).toBe("blocked: this address is blocked\n");
    expect(await ok(r, "listblockedips")).toEqual([
      { ip: "10.9.8.7", reason: "elsewhere" },
      { ip: "127.0.0.1", reason: "abuse" },
    ]);
    expect(await ok(r, "unblockip", ["::ffff:127.0.0.1"])).toBe(true);
    expect(await ok(r, "unblockip", ["10.9.8.7"])).toBe(true);
    expect(await ok(r, "listblockedips")).toEqual([]);
    (await RawClient.connect(r.url)).close();
  });

  test("changerelayname, changerelaydescription and changerelayicon show in NIP-11 at once", async () => {
    expect(await ok(r, "changerelayname", ["Moderated"])).toBe(true);
    expect(await ok(r, "changerelaydescription", ["Run from a client"])).toBe(true);
    expect(await ok(r, "changerelayicon", ["https://example.com/icon.png"])).toBe(true);
    expect(await nip11(r)).toMatchObject({
      name: "Moderated",
      description: "Run from a client",
      icon: "https://example.com/icon.png",
    });
    // The explorer page (the same URL from a browser) names the relay the same way.
    const page = await (await fetch(httpUrl(r), { headers: { Accept: "text/html" } })).text();
    expect(page).toContain("<title>Moderated</title>");
    // An empty value gives the field back to the configuration.
    expect(await ok(r, "changerelayname", [""])).toBe(true);
    expect(await ok(r, "changerelayicon", [""])).toBe(true);
    const info = await nip11(r);
    expect(info.name).toBe(r.ctx.config["info.name"]);
    expect(info.icon).toBeUndefined();
    expect(info.description).toBe("Run from a client");
  });
});

describe("bans are ordered with the events around them", () => {
  test("an event queued ahead of a ban is removed by it and one queued behind it is refused", async () => {
    const r = started();
    const k = newKey();
    const pk = getPublicKey(k);
    const ahead = signed(k, { content: "ahead" });
    const behind = signed(k, { content: "behind" });
    const first = r.ctx.writer.submit(ahead, JSON.stringify(ahead));
    const ban = callMethod(r.ctx, "banpubkey", [pk]);
    const second = r.ctx.writer.submit(behind, JSON.stringify(behind));
    expect((await first).status).toBe("stored");
    expect(await ban).toBe(true);
    expect(await second).toEqual({
      status: "rejected",
      reject: { reject: true, prefix: "blocked", message: "this pubkey is banned from this relay" },
    });
    const c = await RawClient.connect(r.url);
    expect(await c.req("s", { authors: [pk] })).toEqual([]);
    expect(await c.req("t", { ids: [ahead.id, behind.id] })).toEqual([]);
    c.close();
  });
});

describe("persistence", () => {
  test("every list and the NIP-11 fields survive a restart", async () => {
    const dir = tempDir();
    const banned = newKey();
    const first = startTestRelay({ "management.admins": adminPk }, dir);
    const e = signed(newKey());
    const c = await RawClient.connect(first.url);
    expect((await c.publish(e))[2]).toBe(true);
    c.close();
    const r1 = first as TestRelay;
    for (const [m, p] of [
      ["banpubkey", [getPublicKey(banned), "spam"]],
      ["banevent", [e.id, "bad"]],
      ["allowpubkey", [adminPk]],
      ["allowevent", ["c".repeat(64)]],
      ["allowkind", [1]],
      ["disallowkind", [4]],
      ["blockip", ["2001:DB8::1"]],
      ["changerelayname", ["Persistent"]],
    ] as [string, unknown[]][])
      expect(await ok(r1, m, p)).toBe(true);
    await first.stop();

    const r = started({ "management.admins": adminPk }, dir);
    expect(await ok(r, "listbannedpubkeys")).toEqual([{ pubkey: getPublicKey(banned), reason: "spam" }]);
    expect(await ok(r, "listbannedevents")).toEqual([{ id: e.id, reason: "bad" }]);
    expect(await ok(r, "listallowedpubkeys")).toEqual([{ pubkey: adminPk }]);
    expect(await ok(r, "listallowedevents")).toEqual([{ id: "c".repeat(64) }]);
    expect(await ok(r, "listallowedkinds")).toEqual([1]);
    expect(await ok(r, "listdisallowedkinds")).toEqual([4]);
    expect(await ok(r, "listblockedips")).toEqual([{ ip: "2001:db8::1" }]);
    expect((await nip11(r)).name).toBe("Persistent");
    const c2 = await RawClient.connect(r.url);
    const again = signed(banned);
    expect(await c2.publish(again)).toEqual([
      "OK",
      again.id,
      false,
      "blocked: this pubkey is banned from this relay",
    ]);
    expect(await c2.publish(e)).toEqual(["OK", e.id, false, "blocked: this event is banned from this relay"]);
    expect(await c2.req("gone", { ids: [e.id] })).toEqual([]);
    c2.close();

    // `relay import` keeps the bans too.
    await r.stop();
    const file = join(tempDir(), "import.jsonl");
    const keep = signed(newKey());
    await Bun.write(file, [signed(banned), e, keep].map((x) => JSON.stringify(x)).join("\n"));
    const { code, out } = await cli(["import", file, "--data", dir, "--json", "--quiet"]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ accepted: 1, refused: 2 });
  });
});
