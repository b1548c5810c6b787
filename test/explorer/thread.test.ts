// The explorer's thread view in headless chromium: a thread three replies deep (NIP-10 markers,
// and the positional form for the deepest) renders in order from any of its notes: the parent
// chain above, the replies below as a tree, every card with its counts; a reply arriving live
// joins the tree; a parent the relay does not have is said so; on a phone's width no view, a
// twelve-deep thread included, scrolls sideways.
import { describe, expect, test } from "bun:test";
import { noteEncode } from "nostr-tools/nip19";
import type { Browser, BrowserContext } from "playwright-core";
import { newKey, RawClient, signed, startTestRelay } from "../harness.ts";
import { browserForFile, openPage, shownCounts, type WatchedPage } from "./browser.ts";
import { type Seeded, seed } from "./seed.ts";

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

/** The thread as drawn: the chain above, the note itself, and each reply with its depth. */
async function drawn(page: WatchedPage) {
  await page.locator('.replies[data-state="settled"]').waitFor({ state: "attached" });
  await shownCounts(page);
  const ids = (sel: string) =>
    page.locator(sel).evaluateAll((els) => els.map((e) => e.getAttribute("data-id") ?? ""));
  return {
    above: await ids(".ancestors .note"),
    focus: await page.locator(".note.focus").getAttribute("data-id"),
    below: await page
      .locator(".replies li.reply")
      .evaluateAll((els) =>
        els.map((e) => [e.getAttribute("data-id"), Number(e.getAttribute("data-depth"))]),
      ),
  };
}

describe.skipIf(missing !== undefined)("the thread view", () => {
  test("from its root: the replies as a tree three deep, in order", async () => {
    const [root, t1, t2, t3] = data.thread;
    const page = await openPage(context, `${http}/#/e/${root.id}`);
    expect(await drawn(page)).toEqual({
      above: [],
      focus: root.id,
      below: [
        [t1.id, 1],
        [t2.id, 2],
        [t3.id, 3],
      ],
    });
    // Each nested in its parent's list.
    expect(await page.locator(`li[data-id="${t1.id}"] > .kids > li[data-id="${t2.id}"]`).count()).toBe(1);
    expect(await page.locator(`li[data-id="${t2.id}"] > .kids > li[data-id="${t3.id}"]`).count()).toBe(1);
    expect(page.errors).toEqual([]);
    await page.close();
  });

  test("from its deepest note: the whole chain above, root first, and every card's counts", async () => {
    const [root, t1, t2, t3] = data.thread;
    const page = await openPage(context, `${http}/#/e/${t3.id}`);
    expect(await drawn(page)).toEqual({ above: [root.id, t1.id, t2.id], focus: t3.id, below: [] });
    await page.getByText("No replies here.").waitFor();
    const none = { replies: 0, reposts: 0, reactions: 0, sats: 0 };
    expect(await shownCounts(page)).toEqual(
      new Map([root, t1, t2, t3].map((e) => [e.id, data.counts.get(e.id) ?? none])),
    );
    expect(await shownCounts(page)).toEqual(
      new Map([
        [root.id, { replies: 3, reposts: 0, reactions: 2, sats: 250_000 }],
        [t1.id, { replies: 1, reposts: 0, reactions: 0, sats: 0 }],
        [t2.id, { replies: 1, reposts: 0, reactions: 1, sats: 0 }],
        [t3.id, none],
      ]),
    );
    // One counts request for the chain, the note and its replies.
    expect(page.api.filter((p) => p === "/v0/notes/counts")).toHaveLength(1);
    expect(page.errors).toEqual([]);
    await page.close();
  });

  test("from the middle: the chain above and the reply below", async () => {
    const [root, t1, t2, t3] = data.thread;
    const page = await openPage(context, `${http}/#/e/${t2.id}`);
    expect(await drawn(page)).toEqual({ above: [root.id, t1.id], focus: t2.id, below: [[t3.id, 1]] });
    await page.close();
  });

  test("a reply that arrives live joins the tree under its parent, with its counts", async () => {
    const [root, t1, t2] = data.thread;
    const page = await openPage(context, `${http}/#/e/${root.id}`);
    await drawn(page);
    const live = signed(newKey(), {
      content: "Late to this, but a Bruce holds too.",
      tags: [
        ["e", root.id, "", "root"],
        ["e", t1.id, "", "reply"],
      ],
    });
    const c = await RawClient.connect(relay.url);
    expect((await c.publish(live))[2]).toBe(true);
    c.close();
    const li = page.locator(`li[data-id="${t1.id}"] > .kids > li[data-id="${live.id}"][data-depth="2"]`);
    await li.waitFor();
    // Newest first among siblings: the live reply above the older one.
    expect(
      await page
        .locator(`li[data-id="${t1.id}"] > .kids > li`)
        .evaluateAll((els) => els.map((e) => e.getAttribute("data-id"))),
    ).toEqual([live.id, t2.id]);
    await page.locator(`.note[data-id="${t1.id}"] .counts .replies[data-n="2"]`).waitFor();
    await page.locator(`.note[data-id="${root.id}"] .counts .replies[data-n="4"]`).waitFor();
    await li.locator('.counts[data-state="known"]').waitFor();
    expect(page.errors).toEqual([]);
    await page.close();
  });

  test("a parent the relay does not have is named, with the root above it", async () => {
    const [root] = data.thread;
    const absent = "e".repeat(64);
    const orphan = signed(newKey(), {
      content: "replying to something this relay never saw",
      tags: [
        ["e", root.id, "", "root"],
        ["e", absent, "", "reply"],
      ],
    });
    const c = await RawClient.connect(relay.url);
    expect((await c.publish(orphan))[2]).toBe(true);
    c.close();
    const page = await openPage(context, `${http}/#/e/${orphan.id}`);
    await page.locator(".note.focus").waitFor();
    await page.locator(".ancestors .missing").waitFor();
    expect(await page.locator(".ancestors li").evaluateAll((els) => els.map((e) => e.className))).toEqual([
      "",
      "missing",
    ]);
    expect(await page.locator(".ancestors .note").getAttribute("data-id")).toBe(root.id);
    expect(await page.locator(".ancestors .missing a").getAttribute("href")).toBe(`#/e/${absent}`);
    expect(await page.locator(".ancestors .missing a").textContent()).toBe(noteEncode(absent));
    // From the root, the orphan hangs directly below it, marked.
    await page.goto(`${http}/#/e/${root.id}`);
    const li = page.locator(`.replies > li[data-id="${orphan.id}"]`);
    await li.waitFor();
    expect(await li.locator(".gap").textContent()).toBe("In reply to a note this relay does not have");
    expect(page.errors).toEqual([]);
    await page.close();
  });

  test("on a phone no view scrolls sideways, a thread twelve replies deep included", async () => {
    const [root] = data.thread;
    const c = await RawClient.connect(relay.url);
    let parent = root;
    const chain = [];
    for (let depth = 1; depth <= 12; depth++) {
      const ev = signed(newKey(), {
        created_at: root.created_at + depth,
        content: `level ${depth}: a reply with a long unbroken word ${"x".repeat(60)}`,
        tags: [
          ["e", root.id, "", "root"],
          ["e", parent.id, "", "reply"],
        ],
      });
      expect((await c.publish(ev))[2]).toBe(true);
      chain.push(ev);
      parent = ev;
    }
    c.close();
    const phone = await browser.newContext({
      viewport: { width: 360, height: 740 },
      isMobile: true,
      hasTouch: true,
      deviceScaleFactor: 2,
    });
    for (const hash of ["#/", "#/trending", `#/e/${root.id}`, `#/e/${chain[11]!.id}`]) {
      const page = await openPage(phone, `${http}/${hash}`);
      await shownCounts(page);
      if (hash === `#/e/${root.id}`)
        await page.locator(`li[data-id="${chain[11]!.id}"][data-depth="12"]`).waitFor();
      expect([hash, await page.evaluate("document.documentElement.scrollWidth")]).toEqual([hash, 360]);
      expect(page.errors).toEqual([]);
      await page.close();
    }
    await phone.close();
  });
});
