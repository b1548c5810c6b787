// The counts under the explorer's cards and the trending tab, in headless chromium against a relay
// with seeded engagement: every card shows the seeded counts (zap sats from the invoices), which
// are the API's; a page of cards costs one counts request; a live reaction or zap moves a card's
// counts; trending lists the API's notes in the API's order; with the API answering 404, and on
// a relay with the API off, the counts are the same, counted from the WebSocket.
import { beforeAll, describe, expect, test } from "bun:test";
import { npubEncode } from "nostr-tools/nip19";
import type { Browser, BrowserContext } from "playwright-core";
import { newKey, RawClient, signed, startTestRelay } from "../harness.ts";
import {
  browserForFile,
  isRefusedResource,
  listIds,
  openPage,
  type ShownCounts,
  shownCounts,
  type WatchedPage,
} from "./browser.ts";
import { type Seeded, seed } from "./seed.ts";

// BOLT-11 example (lightning/bolts 11-payment-encoding.md): 20m = 2,000,000 sats.
const M20 =
  "lnbc20m1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqhp58yjmdan79s6qqdhdzgynm4zwqd5d7xmw5fk98klysy043l2ahrqscc6gd6ql3jrc5yzme8v4ntcewwz5cnw92tz0pc8qcuufvq7khhr8wpald05e92xw006sq94mg8v2ndf4sefvf9sygkshp5zfem29trqq2yxxz7";

let browser: Browser;
let context: BrowserContext;
let data: Seeded;

const relay = startTestRelay();
const http = relay.url.replace("ws://", "http://");
const missing = browserForFile(
  () => seed(relay.url),
  (b, c, d) => {
    browser = b;
    context = c;
    data = d;
  },
);

const none: ShownCounts = { replies: 0, reposts: 0, reactions: 0, sats: 0 };
/** The seeded counts of these notes, as a card shows them. */
const seeded = (ids: Iterable<string>) => new Map([...ids].map((id) => [id, data.counts.get(id) ?? none]));

/** The API's counts of these notes, as a card shows them. */
async function apiCounts(ids: string[]): Promise<Map<string, ShownCounts>> {
  const r = await fetch(`${http}/v0/notes/counts?ids=${ids.join(",")}`);
  const body = (await r.json()) as { notes: { id: string; counts: Record<string, number> }[] };
  return new Map(
    body.notes.map(({ id, counts: c }) => [
      id,
      { replies: c.replies!, reposts: c.reposts!, reactions: c.likes! + c.reactions!, sats: c.zap_sats! },
    ]),
  );
}

/** The counts requests a page made. */
const countRequests = (page: WatchedPage) => page.api.filter((p) => p === "/v0/notes/counts");

describe.skipIf(missing !== undefined)("counts on the cards", () => {
  test("every card of the home view shows its seeded counts, zap sats included, in one request", async () => {
    const page = await openPage(context, `${http}/#/`);
    const ids = await listIds(page);
    expect(ids).toHaveLength(data.notes.length);
    const shown = await shownCounts(page);
    expect(shown).toEqual(seeded(ids));
    expect(shown).toEqual(await apiCounts(ids));
    expect(shown.get(data.notes[6]!.id)).toEqual({ replies: 0, reposts: 2, reactions: 4, sats: 2_250_000 });
    expect(await page.locator(`.note[data-id="${data.notes[5]!.id}"] .counts .sats`).textContent()).toBe(
      "⚡ 967,878",
    );
    expect(countRequests(page)).toHaveLength(1);
    expect(page.errors).toEqual([]);
    await page.close();
  });

  test("profile, search and thread cards show the same counts", async () => {
    const alice = data.authors[0]!;
    const views = [`#/p/${npubEncode(alice.pubkey)}`, "#/search?q=compaction", `#/e/${data.thread[0].id}`];
    for (const hash of views) {
      const page = await openPage(context, `${http}/${hash}`);
      const shown = await shownCounts(page);
      expect(shown.size).toBeGreaterThan(2);
      expect(shown).toEqual(seeded(shown.keys()));
      expect(page.errors).toEqual([]);
      await page.close();
    }
  });

  test("a reaction, a repost and a zap that arrive live move the card's counts", async () => {
    const page = await openPage(context, `${http}/#/`);
    const target = data.notes[4]!; // one like, seeded
    await shownCounts(page);
    const c = await RawClient.connect(relay.url);
    for (const ev of [
      signed(newKey(), { kind: 7, content: "+", tags: [["e", target.id]] }),
      signed(newKey(), { kind: 6, tags: [["e", target.id]] }),
      signed(newKey(), {
        kind: 9735,
        tags: [
          ["e", target.id],
          ["bolt11", M20],
        ],
      }),
    ])
      expect((await c.publish(ev))[2]).toBe(true);
    // A note that arrives live gets its counts, and follows its own engagement too.
    const fresh = signed(newKey(), { content: "a live note to react to" });
    expect((await c.publish(fresh))[2]).toBe(true);
    await page.locator(`.note[data-id="${fresh.id}"] .counts[data-state="known"]`).waitFor();
    expect((await c.publish(signed(newKey(), { kind: 7, content: "🌊", tags: [["e", fresh.id]] })))[2]).toBe(
      true,
    );
    c.close();
    const card = (id: string, k: string) => page.locator(`.note[data-id="${id}"] .counts .${k}`);
    await card(target.id, "sats").and(page.locator('[data-n="2000000"]')).waitFor();
    await card(fresh.id, "reactions").and(page.locator('[data-n="1"]')).waitFor();
    const shown = await shownCounts(page);
    expect(shown.get(target.id)).toEqual({ replies: 0, reposts: 1, reactions: 2, sats: 2_000_000 });
    expect(shown.get(fresh.id)).toEqual({ replies: 0, reposts: 0, reactions: 1, sats: 0 });
    expect(shown).toEqual(await apiCounts([...shown.keys()]));
    expect(page.errors).toEqual([]);
    await page.close();
    data.counts.set(target.id, { replies: 0, reposts: 1, reactions: 2, sats: 2_000_000 });
    data.counts.set(fresh.id, { replies: 0, reposts: 0, reactions: 1, sats: 0 });
    data.notes.push(fresh);
  });

  test("without the API the counts are the same, counted from the WebSocket", async () => {
    const ctx = await browser.newContext();
    await ctx.route("**/v0/{notes,trending,p}/**", (r) => r.fulfill({ status: 404, body: "{}" }));
    const page = await openPage(ctx, `${http}/#/`);
    const ids = await listIds(page);
    const shown = await shownCounts(page);
    expect(shown).toEqual(seeded(ids));
    // Asked once, refused, and not asked again for every page.
    expect(countRequests(page)).toHaveLength(1);
    // Live engagement is counted on the page.
    const target = data.thread[3];
    const c = await RawClient.connect(relay.url);
    const reply = signed(newKey(), {
      tags: [
        ["e", data.thread[0].id, "", "root"],
        ["e", target.id, "", "reply"],
      ],
      content: "counted by the page",
    });
    expect((await c.publish(reply))[2]).toBe(true);
    c.close();
    await page.locator(`.note[data-id="${target.id}"] .counts .replies[data-n="1"]`).waitFor();
    await page.locator(`.note[data-id="${data.thread[0].id}"] .counts .replies[data-n="4"]`).waitFor();
    expect(page.errors.filter((e) => !isRefusedResource(e))).toEqual([]);
    await ctx.close();
    data.counts.set(target.id, { replies: 1, reposts: 0, reactions: 0, sats: 0 });
    data.counts.set(data.thread[0].id, { ...data.counts.get(data.thread[0].id)!, replies: 4 });
    data.notes.push(reply);
  });
});

describe.skipIf(missing !== undefined)("the trending tab", () => {
  test("lists the API's trending notes in the API's order, with the API's counts", async () => {
    const page = await openPage(context, `${http}/#/`);
    await page.getByRole("link", { name: "Trending" }).click();
    await page.waitForURL(/#\/trending$/);
    const ids = await listIds(page);
    const shown = await shownCounts(page);
    const api = (await (await fetch(`${http}/v0/trending/notes?limit=30`)).json()) as {
      notes: { event: { id: string }; counts: Record<string, number> }[];
    };
    expect(api.notes.length).toBeGreaterThan(5);
    expect(ids).toEqual(api.notes.map((n) => n.event.id));
    expect(shown).toEqual(
      new Map(
        api.notes.map(({ event, counts: c }) => [
          event.id,
          { replies: c.replies!, reposts: c.reposts!, reactions: c.likes! + c.reactions!, sats: c.zap_sats! },
        ]),
      ),
    );
    expect(shown).toEqual(seeded(ids));
    expect(await page.locator('.tabs a[aria-current="page"]').textContent()).toBe("Trending");
    expect(page.errors).toEqual([]);
    await page.close();
  });

  test("says so when the API does not answer", async () => {
    const ctx = await browser.newContext();
    await ctx.route("**/v0/trending/**", (r) => r.fulfill({ status: 404, body: "{}" }));
    const page = await openPage(ctx, `${http}/#/trending`);
    await page.getByText("Trending needs this relay's HTTP API").waitFor();
    expect(await listIds(page)).toEqual([]);
    await ctx.close();
  });
});

describe.skipIf(missing !== undefined)("a relay with the API off", () => {
  const off = startTestRelay({ "api.enabled": "false" });
  const offHttp = off.url.replace("ws://", "http://");
  let offData: Seeded;
  beforeAll(async () => {
    offData = await seed(off.url);
  });

  test("shows the seeded counts on the home and thread views, counted from the WebSocket", async () => {
    for (const hash of ["#/", `#/e/${offData.thread[1].id}`]) {
      const page = await openPage(context, `${offHttp}/${hash}`);
      const shown = await shownCounts(page);
      expect(shown.size).toBeGreaterThan(3);
      expect(shown).toEqual(new Map([...shown.keys()].map((id) => [id, offData.counts.get(id) ?? none])));
      // The only errors are the browser's own lines for the API's 404s.
      expect(page.errors.filter((e) => !isRefusedResource(e))).toEqual([]);
      expect(page.api.filter((p) => p === "/v0/notes/counts")).toHaveLength(1);
      await page.close();
    }
  });

  test("says that trending needs the API", async () => {
    const page = await openPage(context, `${offHttp}/#/trending`);
    await page.getByText("Trending needs this relay's HTTP API").waitFor();
    await page.close();
  });
});
