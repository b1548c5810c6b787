// Headless Debian chromium for the explorer's browser tests and scripts/screenshots.ts, driven by
// playwright-core. Installs chromium when missing and running as root; otherwise fails with the
// command to run, so a machine without a browser never passes by skipping.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() !== 0)
    throw new Error(
      `the explorer browser tests need ${CHROMIUM}; install it with: sudo apt-get update && sudo apt-get install -y chromium`,
    );
  console.log("installing chromium (apt-get) for the explorer browser tests…");
  for (const cmd of [
    ["apt-get", "update", "-qq"],
    ["apt-get", "install", "-y", "-qq", "chromium"],
  ]) {
    const r = Bun.spawnSync({
      cmd,
      stdout: "ignore",
      stderr: "pipe",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
    if (r.exitCode !== 0) throw new Error(`'${cmd.join(" ")}' failed: ${r.stderr.toString().slice(-2000)}`);
  }
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium but ${CHROMIUM} is missing`);
}

export async function launchChromium(): Promise<Browser> {
  ensureChromium();
  // --no-sandbox: the tests often run as root in a container, where chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}
