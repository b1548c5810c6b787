// What scripts/smoke.ts feeds a binary (events) and what it hides from it (the host's
// libsecp256k1 files).
import { existsSync, realpathSync } from "node:fs";
import { finalizeEvent, generateSecretKey, type NostrEvent } from "nostr-tools/pure";

/** A signed event of a fresh key. */
export const note = (
  content: string,
  created_at = Math.floor(Date.now() / 1000),
  kind = 1,
  tags: string[][] = [],
): NostrEvent => finalizeEvent({ kind, created_at, tags, content }, generateSecretKey());

/**
 * Events for `relay import` then `relay export`, oldest first as the export writes them: text
 * that JSON escapes, an empty profile, tags, an addressable event.
 */
export function roundTripEvents(): NostrEvent[] {
  const t = Math.floor(Date.now() / 1000) - 1000;
  return [
    note("plain", t),
    note('ünïcödé ✓ "quoted" \\ and a\nnewline', t + 1),
    note("", t + 2, 0),
    note("tagged", t + 3, 1, [
      ["t", "smoke"],
      ["p", "a".repeat(64)],
    ]),
    note("addressable", t + 4, 30023, [["d", "smoke"]]),
  ];
}

/**
 * Every libsecp256k1 file the binary's loader could find, resolved (what must be hidden): the
 * host's, and under an emulator given `-L DIR` also those under DIR, where it looks first.
 */
export function libraryFiles(emulator: readonly string[]): string[] {
  const found = new Set<string>();
  const ldconfig = Bun.spawnSync({ cmd: ["/sbin/ldconfig", "-p"], stdout: "pipe", stderr: "ignore" });
  const listed = [...ldconfig.stdout.toString().matchAll(/libsecp256k1\S*.*=> (\S+)/g)].map((m) => m[1]!);
  const at = emulator.indexOf("-L");
  const roots = ["", ...(at >= 0 && emulator[at + 1] ? [emulator[at + 1]!] : [])];
  const dirs = ["/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"];
  const arch = ["x86_64-linux-gnu", "aarch64-linux-gnu"];
  const guesses = roots
    .flatMap((root) => dirs.map((d) => root + d))
    .flatMap((d) => [d, ...arch.map((a) => `${d}/${a}`)])
    .flatMap((d) => ["libsecp256k1.so", "libsecp256k1.so.1", "libsecp256k1.so.2"].map((f) => `${d}/${f}`));
  for (const f of [...listed, ...guesses]) if (existsSync(f)) found.add(realpathSync(f));
  return [...found];
}
