// "Older" on the explorer's home, search, profile and thread views, in headless chromium: 120
// notes (seven to a second, so each page of 30 ends inside a run of equal created_at) are shown
// 30 at a time, each exactly once and none missing, newest first, with one counts request per
// page; then the button says there is nothing older.
import { describe, expect, test } from "bun:test";
import { npubEncode } from "nostr-tools/nip19";
import type { BrowserContext } from "playwright-core";
import { startTestRelay } from "../harness.ts";
import { browserForFile, openPage, type WatchedPage } from "./browser.ts";
import { type PagesSeeded, seedPages } from "./seed.ts";

let context: BrowserContext;
let data: PagesSeeded;

const relay = startTestRelay();
const http = relay.url.replace("ws://", "http://");
const missing = browserForFile(
  () => seedPages(relay.url),
  (_, c, d) => {
    context = c;
    data = d;
  },
);

/**
 * Clicks "Older" until the end, reading the cards after each page: the ids shown after the first
 * page and after each click.
 */
async function pageThrough(page: WatchedPage, cards: string): Promise<string[][]> {
  const ids = () => page.locator(cards).evaluateAll((els) => els.map((e) => e.getAttribute("data-id") ?? ""));
  const older = page.locator(".older");
  await older.and(page.locator('[data-pages="1"]')).waitFor();
  const seen = [await ids()];
  for (let n = 2; (await older.getAttribute("data-end")) !== "true"; n++) {
    await older.getByRole("button").click();
    await older.and(page.locator(`[data-pages="${n}"]`)).waitFor();
    seen.push(await ids());
    if (n > 10) throw new Error("more pages than notes");
  }
  expect(await older.getByText("No older notes.").isVisible()).toBe(true);
  return seen;
}

const ALL = () => data.notes.map((e) => e.id);

describe.skipIf(missing !== undefined)("older pages", () => {
  for (const [view, hash, cards] of [
    ["home", () => "#/", "#view .list .note"],
    ["search", () => "#/search?q=paging", "#view .list .note"],
    ["profile", () => `#/p/${npubEncode(data.author)}`, "#view .list .note"],
    ["thread", () => `#/e/${data.root.id}`, ".replies .note"],
  ] as const)
    test(`the ${view} view shows 120 notes 30 at a time, each once, in order`, async () => {
      const page = await openPage(context, `${http}/${hash()}`);
      const pages = await pageThrough(page, cards);
      // After each page, exactly the newest 30, 60, 90, 120: no gap, no duplicate.
      expect(pages.map((ids) => ids.length)).toEqual([30, 60, 90, 120, 120]);
      for (const [i, ids] of pages.entries())
        expect(ids).toEqual(ALL().slice(0, Math.min(120, 30 * (i + 1))));
      expect(new Set(pages.at(-1)).size).toBe(120);
      // One counts request per page (the profile's first page came with the API's counts).
      const asked = page.api.filter((p) => p === "/v0/notes/counts").length;
      expect(asked).toBe(view === "profile" ? 3 : 4);
      expect(page.errors).toEqual([]);
      await page.close();
    });

  test("every page ends inside a run of notes of the same second", () => {
    for (const cut of [30, 60, 90]) expect(data.notes[cut - 1]!.created_at).toBe(data.notes[cut]!.created_at);
  });
});
