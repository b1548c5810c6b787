// Screenshots of the explorer for docs/explorer.md: `bun scripts/screenshots.ts [--timing]`.
// Starts a relay on a temporary directory, seeds it (test/explorer/seed.ts), and writes
// docs/explorer-desktop.png, docs/explorer-phone.png, docs/explorer-profile.png,
// docs/explorer-thread.png and docs/explorer-trending.png with headless chromium. --timing also loads the page 15 times cold (new browser profile) and 15 times warm
// (files cached) and prints the medians given in docs/explorer.md.
import { join } from "node:path";
import { npubEncode } from "nostr-tools/nip19";
import type { Browser } from "playwright-core";
import { launchChromium } from "../test/explorer/browser.ts";
import { seed } from "../test/explorer/seed.ts";
import { startTestRelay } from "../test/harness.ts";

const DOCS = join(import.meta.dir, "..", "docs");

const relay = startTestRelay({
  "info.name": "harbour relay",
  "info.description": "A small public relay for the harbour community",
  "info.contact": "mailto:ops@example.org",
});
const http = relay.url.replace("ws://", "http://");
const browser = await launchChromium();
try {
  const data = await seed(relay.url);
  // A signer stub, so the publishing form shows as it does with a NIP-07 extension.
  const signer = `window.nostr = { getPublicKey: async () => "${data.authors[0]!.pubkey}", signEvent: async () => { throw new Error("stub") } };`;
  const shots: [file: string, viewport: { width: number; height: number }, hash: string, mobile: boolean][] =
    [
      ["explorer-desktop.png", { width: 1280, height: 860 }, "#/", false],
      ["explorer-phone.png", { width: 390, height: 844 }, "#/", true],
      [
        "explorer-profile.png",
        { width: 1280, height: 860 },
        `#/p/${npubEncode(data.authors[0]!.pubkey)}`,
        false,
      ],
      ["explorer-thread.png", { width: 1280, height: 860 }, `#/e/${data.thread[1].id}`, false],
      ["explorer-trending.png", { width: 390, height: 844 }, "#/trending", true],
    ];
  for (const [file, viewport, hash, isMobile] of shots) {
    const context = await browser.newContext({
      viewport,
      isMobile,
      hasTouch: isMobile,
      deviceScaleFactor: isMobile ? 2 : 1,
    });
    const page = await context.newPage();
    await page.addInitScript(signer);
    await page.goto(`${http}/${hash}`);
    await page.locator(".note").first().waitFor();
    await page.locator('.counts[data-state="known"]').first().waitFor();
    // Names arrive after the notes; give the stats poll and the profile batch a moment.
    await page.waitForFunction("document.querySelector('#stat-events')?.textContent !== '–'");
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(DOCS, file) });
    await context.close();
    console.log(`wrote docs/${file}`);
  }
  if (process.argv.includes("--timing")) for (const warm of [false, true]) await timing(browser, warm);
} finally {
  await browser.close();
  await relay.destroy();
}

/** Medians of 15 loads: navigation timing, and navigation start to the notes' EOSE rendered. */
async function timing(b: Browser, warm: boolean): Promise<void> {
  const runs: Record<string, number>[] = [];
  const settled = ".list[data-state=settled]";
  const observe =
    `new MutationObserver(() => { if (document.querySelector("${settled}")) window.__notes ??= performance.now(); })` +
    ".observe(document, { subtree: true, childList: true, attributes: true });";
  const shared = await b.newContext();
  await shared.addInitScript(observe);
  if (warm) {
    const p = await shared.newPage();
    await p.goto(`${http}/`);
    await p.locator(settled).waitFor();
    await p.close();
  }
  for (let i = 0; i < 15; i++) {
    const ctx = warm ? shared : await b.newContext();
    if (!warm) await ctx.addInitScript(observe);
    const p = await ctx.newPage();
    await p.goto(`${http}/`);
    await p.locator(settled).waitFor();
    runs.push(
      JSON.parse(
        await p.evaluate(`JSON.stringify((() => {
          const n = performance.getEntriesByType("navigation")[0];
          const files = performance.getEntriesByType("resource").filter((x) => x.name.includes("/explorer/"));
          return {
            domContentLoaded: n.domContentLoadedEventEnd,
            firstPaint: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? 0,
            notes: window.__notes,
            transferred: n.transferSize + files.reduce((a, x) => a + x.transferSize, 0),
          };
        })())`),
      ) as Record<string, number>,
    );
    await p.close();
    if (!warm) await ctx.close();
  }
  await shared.close();
  const median = (k: string) => runs.map((r) => r[k]!).sort((a, c) => a - c)[runs.length >> 1]!;
  const line = ["domContentLoaded", "firstPaint", "notes"].map((k) => `${k} ${Math.round(median(k))} ms`);
  console.log(`${warm ? "warm" : "cold"}: ${line.join(", ")}, transferred ${median("transferred")} B`);
}
