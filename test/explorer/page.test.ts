// The explorer in headless chromium against a real relay with seeded events: NIP-11, live
// figures, live notes, search, the NIP-19 decoder, profile and event views, escaping, and
// publishing through a stubbed NIP-07 signer whose signing happens here, outside the page.
import { describe, expect, test } from "bun:test";
import { naddrEncode, neventEncode, noteEncode, nprofileEncode, npubEncode } from "nostr-tools/nip19";
import { finalizeEvent, generateSecretKey, getPublicKey } from "nostr-tools/pure";
import type { Browser, BrowserContext } from "playwright-core";
import { nrelayEncode } from "../../src/explorer/client/nostr/entities.ts";
import { newKey, now, RawClient, signed, startTestRelay } from "../harness.ts";
import { browserForFile, listIds as ids, openPage, type WatchedPage } from "./browser.ts";
import { type Seeded, seed } from "./seed.ts";

const OPERATOR = getPublicKey(generateSecretKey());

let browser: Browser;
let context: BrowserContext;
let data: Seeded;

const relay = startTestRelay({
  "info.name": "explorer test relay",
  "info.contact": "mailto:ops@example.org",
  "info.pubkey": OPERATOR,
});
const http = relay.url.replace("ws://", "http://");
const missing = browserForFile(
  () => seed(relay.url),
  (b, c, d) => {
    browser = b;
    context = c;
    data = d;
  },
);

/** A fresh page at a route; the page's errors fail the test. */
const open = (hash = "#/", ctx = context): Promise<WatchedPage> => openPage(ctx, `${http}/${hash}`);

const kind1 = () => data.notes.filter((e) => e.kind === 1);
const newestFirst = <T extends { created_at: number; id: string }>(evs: T[]) =>
  [...evs].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1)).map((e) => e.id);

describe.skipIf(missing !== undefined)("the explorer page", () => {
  test("shows the relay's NIP-11 information", async () => {
    const page = await open();
    expect(await page.locator("h1").textContent()).toBe("explorer test relay");
    const info = page.locator("#info");
    await info.getByText("bunstr-relay").waitFor();
    expect(await info.getByRole("link", { name: "ops@example.org" }).getAttribute("href")).toBe(
      "mailto:ops@example.org",
    );
    expect(await info.getByRole("link", { name: /^npub1/ }).getAttribute("href")).toBe(
      `#/p/${npubEncode(OPERATOR)}`,
    );
    expect(await info.locator(".nips a").allTextContents()).toEqual(
      expect.arrayContaining(["01", "11", "50"]),
    );
    expect(await info.locator(".limits").textContent()).toContain("max subscriptions50");
    expect(await page.title()).toBe("explorer test relay");
    expect(page.errors).toEqual([]);
    await page.close();
  });

  test("shows this relay's ws:// address and nrelay", async () => {
    const page = await open();
    expect(await page.locator("#ws-url").textContent()).toBe(relay.url);
    expect(await page.locator("#nrelay").textContent()).toBe(nrelayEncode(relay.url));
    await page.locator(".dot.open").waitFor();
    await page.close();
  });

  test("shows the stored count and open connections from /v0/stats", async () => {
    const page = await open();
    await page.locator("#stat-events", { hasNotText: "–" }).waitFor();
    const stats = (await (await fetch(`${http}/v0/stats`)).json()) as { events: number };
    expect(Number(await page.locator("#stat-events").textContent())).toBe(stats.events);
    // Polled again once the page's own WebSocket is open, so it counts itself.
    await page.locator("#stat-connections", { hasText: /^[1-9]/ }).waitFor();
    await page.close();
  });

  test("lists the latest notes, newest first, and shows a note published after load", async () => {
    const page = await open();
    expect(await ids(page)).toEqual(newestFirst(kind1()));
    // Author names arrive in a batch after the notes.
    await page.locator(".note .author", { hasText: "Alice Moreau" }).first().waitFor();
    const c = await RawClient.connect(relay.url);
    const live = signed(newKey(), { content: "a live note from outside the page" });
    expect((await c.publish(live))[2]).toBe(true);
    c.close();
    const first = page.locator("#view .list .note").first();
    await first.and(page.locator(`[data-id="${live.id}"]`)).waitFor();
    expect(await first.locator(".content").textContent()).toBe("a live note from outside the page");
    await page.close();
  });

  test("searches over NIP-50 and shows exactly the matching notes", async () => {
    const page = await open();
    await page.locator("#search input").fill("compaction");
    await page.locator("#search button").click();
    await page.waitForURL(/#\/search\?q=compaction$/);
    const want = data.notes.filter((e) => /compaction/i.test(e.content)).map((e) => e.id);
    expect(want).toHaveLength(3);
    expect((await ids(page)).sort()).toEqual(want.sort());
    expect(await page.locator("#view h2").textContent()).toBe("Results for compaction");
    // A route can be opened directly; a word found nowhere says so.
    await page.goto(`${http}/#/search?q=${encodeURIComponent("zeppelin")}`);
    expect(await ids(page)).toEqual([]);
    await page.getByText("No matching events.").waitFor();
    await page.close();
  });

  test("decodes pasted entities and links to the matching view", async () => {
    const page = await open();
    const input = page.locator("#decode-input");
    const out = page.locator("#decoded");
    const alice = data.authors[0]!;
    const note = data.notes[0]!;
    const article = data.article;
    const naddr = naddrEncode({ kind: 30023, pubkey: article.pubkey, identifier: "reading-club" });
    const cases: [string, string, string][] = [
      [npubEncode(alice.pubkey), "Open profile", `#/p/${npubEncode(alice.pubkey)}`],
      [`nostr:${npubEncode(alice.pubkey)}`, "Open profile", `#/p/${npubEncode(alice.pubkey)}`],
      [
        nprofileEncode({ pubkey: alice.pubkey, relays: [relay.url] }),
        "Open profile",
        `#/p/${npubEncode(alice.pubkey)}`,
      ],
      [noteEncode(note.id), "Open event", `#/e/${note.id}`],
      [neventEncode({ id: note.id, author: note.pubkey, kind: 1 }), "Open event", `#/e/${note.id}`],
      [`nostr:${naddr}`, "Open address", `#/a/${naddr}`],
      [nrelayEncode(relay.url), "This relay", "#/"],
      [nrelayEncode("wss://relay.example.com"), "Open relay page", "https://relay.example.com"],
    ];
    for (const [entity, label, href] of cases) {
      await input.fill(entity);
      expect(await out.getByRole("link", { name: label }).getAttribute("href")).toBe(href);
    }
    await input.fill(nrelayEncode("wss://relay.example.com"));
    expect(await out.locator("dd").textContent()).toBe("wss://relay.example.com");
    // The naddr link opens the addressable event, found by kind, author and d tag.
    await input.fill(naddr);
    await out.getByRole("link", { name: "Open address" }).click();
    await page.locator(`#view .note[data-id="${article.id}"]`).waitFor();
    expect(await page.locator("#view pre.json").textContent()).toContain('"reading-club"');
    // A secret key is never displayed.
    const sk = generateSecretKey();
    const { nsecEncode } = await import("nostr-tools/nip19");
    await input.fill(nsecEncode(sk));
    expect(await out.textContent()).toContain("secret key");
    expect(await out.textContent()).not.toContain(Buffer.from(sk).toString("hex"));
    await input.fill("not an entity");
    expect(await out.textContent()).toContain("Not a NIP-19 entity");
    await page.close();
  });

  test("a pasted entity in the search box opens its view instead of searching", async () => {
    const page = await open();
    await page.locator("#search input").fill(`nostr:${noteEncode(data.notes[1]!.id)}`);
    await page.locator("#search button").click();
    await page.waitForURL(new RegExp(`#/e/${data.notes[1]!.id}$`));
    await page.locator(`#view .note[data-id="${data.notes[1]!.id}"]`).waitFor();
    await page.close();
  });

  test("shows a profile with the author's notes, from the JSON API or over WebSocket", async () => {
    const alice = data.authors[0]!;
    const hers = newestFirst(kind1().filter((e) => e.pubkey === alice.pubkey));
    const page = await open(`#/p/${npubEncode(alice.pubkey)}`);
    await page.locator(".profile h2", { hasText: "Alice Moreau" }).waitFor();
    expect(await page.locator(".profile .about").textContent()).toContain("Runs a small relay in Lyon.");
    expect(await ids(page)).toEqual(hers);
    // Without the API (404), the same view comes from REQs.
    const fallback = await context.newPage();
    await fallback.route("**/v0/p/**", (r) => r.fulfill({ status: 404, body: "not found" }));
    await fallback.goto(`${http}/#/p/${npubEncode(alice.pubkey)}`);
    await fallback.locator(".profile h2", { hasText: "Alice Moreau" }).waitFor();
    expect(await ids(fallback)).toEqual(hers);
    await page.close();
    await fallback.close();
  });

  test("shows an event with its JSON and its replies", async () => {
    const question = data.notes[3]!;
    const page = await open(`#/e/${question.id}`);
    await page.locator(`#view .event .note.focus[data-id="${question.id}"]`).waitFor();
    expect(JSON.parse((await page.locator("pre.json").textContent()) ?? "")).toEqual(
      JSON.parse(JSON.stringify(question)),
    );
    expect(await page.locator(".event .facts").textContent()).toContain(noteEncode(question.id));
    expect(await ids(page, "#view .event .replies")).toEqual([data.reply.id]);
    await page.goto(`${http}/#/e/${"0".repeat(64)}`);
    await page.getByText("This relay does not have that event.").waitFor();
    await page.close();
  });

  test("renders event text as text: markup in notes and names stays inert", async () => {
    const sk = newKey();
    const evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    const c = await RawClient.connect(relay.url);
    const profile = signed(sk, { kind: 0, content: JSON.stringify({ name: "<b>bold</b>", about: evil }) });
    const noteEv = signed(sk, { content: `${evil} javascript:alert(1) https://example.org/x?a=<1>` });
    for (const e of [profile, noteEv]) expect((await c.publish(e))[2]).toBe(true);
    c.close();
    const page = await open(`#/p/${npubEncode(getPublicKey(sk))}`);
    await page.locator(".profile h2", { hasText: "<b>bold</b>" }).waitFor();
    await page.locator(`.note[data-id="${noteEv.id}"]`).waitFor();
    expect(await page.locator(`.note[data-id="${noteEv.id}"] .content`).textContent()).toBe(noteEv.content);
    expect(await page.locator("#view img, #view script, #view b").count()).toBe(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    // Only the http(s) URL became a link, cut before the first character a URL cannot hold.
    const links = page.locator(`.note[data-id="${noteEv.id}"] .content a`);
    expect(await links.count()).toBe(1);
    expect(await links.getAttribute("href")).toBe("https://example.org/x?a=");
    await page.close();
  });

  test("loads profile pictures only once switched on, lazily and without a referrer", async () => {
    const sk = newKey();
    const picture = "https://pictures.invalid/me.png";
    const c = await RawClient.connect(relay.url);
    for (const e of [
      signed(sk, { kind: 0, content: JSON.stringify({ name: "pictured", picture }) }),
      signed(sk, { content: "a note with a face" }),
    ])
      expect((await c.publish(e))[2]).toBe(true);
    c.close();
    const ctx = await browser.newContext();
    const fetched: string[] = [];
    await ctx.route("https://pictures.invalid/**", (r) => {
      fetched.push(r.request().url());
      return r.fulfill({ status: 204 });
    });
    const page = await open(`#/p/${npubEncode(getPublicKey(sk))}`, ctx);
    await page.locator(".profile h2", { hasText: "pictured" }).waitFor();
    await ids(page);
    expect(await page.locator("img").count()).toBe(0);
    expect(fetched).toEqual([]);
    await page.getByLabel("Load profile pictures").check();
    const img = page.locator(".profile img.avatar");
    await img.waitFor();
    expect(await img.getAttribute("src")).toBe(picture);
    expect(
      await img.evaluate((el) => [el.getAttribute("loading"), el.getAttribute("referrerpolicy")]),
    ).toEqual(["lazy", "no-referrer"]);
    await page.locator(".note img.avatar").first().waitFor();
    await ctx.close();
  });

  test("without window.nostr the publish form is hidden", async () => {
    const page = await open();
    await page.getByText("Install a NIP-07 signer extension").waitFor();
    expect(await page.locator("#publish").isHidden()).toBe(true);
    await page.close();
  });

  test("publishes a note signed by a NIP-07 signer and shows the relay's OK", async () => {
    const sk = generateSecretKey();
    const ctx = await browser.newContext();
    // The key stays in this process: the page only sees these two functions.
    await ctx.exposeFunction("__testPubkey", () => getPublicKey(sk));
    await ctx.exposeFunction(
      "__testSign",
      (t: { kind: number; created_at: number; tags: string[][]; content: string }) =>
        finalizeEvent(t.content.includes("from the future") ? { ...t, created_at: now() + 3600 } : t, sk),
    );
    await ctx.addInitScript(`window.nostr = {
      getPublicKey: () => window.__testPubkey(),
      signEvent: (t) => window.__testSign(t),
    };`);
    const page = await open("#/", ctx);
    await page.locator("#view .list[data-state=settled]").waitFor();
    const content = `signed outside the page ${crypto.randomUUID()}`;
    await page.locator("#publish-text").fill(content);
    await page.getByRole("button", { name: "Sign and publish" }).click();
    await page.locator("#publish-status", { hasText: "OK: stored" }).waitFor();
    const card = page.locator("#view .list .note").first();
    await card.locator(".content", { hasText: content }).waitFor();
    const id = await card.getAttribute("data-id");
    // Stored: a new connection finds it by id.
    const c = await RawClient.connect(relay.url);
    expect(await c.req("check", { ids: [id], authors: [getPublicKey(sk)] })).toEqual([id!]);
    c.close();
    // A refusal shows the relay's reason.
    await page.locator("#publish-text").fill("a note from the future");
    await page.getByRole("button", { name: "Sign and publish" }).click();
    await page.locator("#publish-status.bad", { hasText: /^Refused: invalid: / }).waitFor();
    expect(page.errors).toEqual([]);
    await ctx.close();
  });
});
