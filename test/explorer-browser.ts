// Headless Debian chromium for the explorer's browser tests and scripts/screenshots.ts, driven by
// playwright-core. Nothing is installed from here (`.ci/run` installs chromium): without it the
// browser tests skip with one line saying what to install.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

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
