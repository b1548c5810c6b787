// Headless Debian chromium for the explorer's browser tests and scripts/screenshots.ts, driven by
// playwright-core, and what those tests read off a page (errors, card ids, counts). Nothing is installed from here (`.ci/run` installs chromium): without it the
// browser tests skip with one line saying what to install.
import { afterAll, beforeAll } from "bun:test";
import { existsSync } from "node:fs";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** Why the browser tests cannot run here, or undefined when they can. */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  return `${CHROMIUM} is missing; install it with: sudo apt-get install -y chromium (.ci/run does)`;
}

export async function launchChromium(): Promise<Browser> {
  const missing = chromiumMissing();
  if (missing) throw new Error(missing);
  // --no-sandbox: the tests often run as root in a container, where chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}

/**
 * One test file's browser: Chromium launched and the relay seeded (`seedData`) before its tests,
 * a context handed to `ready`, the browser closed after them. Returns why the file's browser
 * tests skip (logged once), or undefined when they run.
 */
export function browserForFile<T>(
  seedData: () => Promise<T>,
  ready: (browser: Browser, context: BrowserContext, data: T) => void,
): string | undefined {
  const missing = chromiumMissing();
  if (missing) console.log(`explorer browser tests skipped: ${missing}`);
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (missing) return;
    const [b, data] = await Promise.all([launchChromium(), seedData()]);
    browser = b;
    ready(b, await b.newContext(), data);
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
  });
  return missing;
}

/** A page whose errors (uncaught, and console errors) and API requests are recorded. */
export type WatchedPage = Page & { errors: string[]; api: string[] };

/** A fresh page at `url`, recording from before it loads. */
export async function openPage(context: BrowserContext, url: string): Promise<WatchedPage> {
  const page = Object.assign(await context.newPage(), { errors: [] as string[], api: [] as string[] });
  page.on("pageerror", (e) => page.errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") page.errors.push(m.text());
  });
  page.on("request", (r) => {
    const path = new URL(r.url()).pathname;
    if (/^\/v[01]\//.test(path) && path !== "/v0/stats") page.api.push(path);
  });
  await page.goto(url);
  return page;
}

/** The browser's own line for a response it was refused (not the page's doing). */
export const isRefusedResource = (message: string): boolean =>
  /^Failed to load resource: the server responded with a status of 4\d\d/.test(message);

/** Ids of the cards in a list once its stored answer is in, in page order. */
export async function listIds(page: Page, list = "#view .list"): Promise<string[]> {
  await page.locator(`${list}[data-state="settled"]`).first().waitFor();
  return page.locator(`${list} .note`).evaluateAll((els) => els.map((e) => e.getAttribute("data-id") ?? ""));
}

/** What a card's counts line shows. */
export interface ShownCounts {
  replies: number;
  reposts: number;
  reactions: number;
  sats: number;
}

/** The counts of every card under `scope`, once each card has its counts, by note id. */
export async function shownCounts(page: Page, scope = "#view"): Promise<Map<string, ShownCounts>> {
  await page.locator(`${scope} .note`).first().waitFor();
  await page
    .locator(`${scope} .note:not(:has(.counts[data-state="known"]))`)
    .first()
    .waitFor({ state: "detached" });
  const rows = await page.locator(`${scope} .note`).evaluateAll((els) =>
    els.map((el) => {
      const n = (k: string) => Number(el.querySelector(`.counts .n.${k}`)?.getAttribute("data-n"));
      return [
        el.getAttribute("data-id") ?? "",
        { replies: n("replies"), reposts: n("reposts"), reactions: n("reactions"), sats: n("sats") },
      ] as const;
    }),
  );
  return new Map(rows);
}
