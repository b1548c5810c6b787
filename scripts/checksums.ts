// dist/SHA256SUMS: one line per binary in dist/, in the format `sha256sum -c` reads, so an
// operator checks a download with `sha256sum -c --ignore-missing SHA256SUMS`. Written anew after
// every build from the files present, so it never names a binary that is not there or is stale.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Writes `<dir>/SHA256SUMS` for every `relay-*` file in `dir`; returns its path. */
export function writeChecksums(dir: string): string {
  const lines = readdirSync(dir)
    .filter((f) => f.startsWith("relay-"))
    .sort()
    .map(
      (f) =>
        `${createHash("sha256")
          .update(readFileSync(join(dir, f)))
          .digest("hex")}  ${f}`,
    );
  const file = join(dir, "SHA256SUMS");
  writeFileSync(file, lines.length ? `${lines.join("\n")}\n` : "");
  return file;
}
