// deploy/relay.service, the unit docs/operations.md tells operators to install: systemd accepts
// it as it is, and the documentation shows the same file.
import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./harness.ts";

const UNIT = new URL("../deploy/relay.service", import.meta.url).pathname;
const DOCS = new URL("../docs/operations.md", import.meta.url).pathname;
const BINARY = "/usr/local/bin/relay";

describe("deploy/relay.service", () => {
  // `systemd-analyze verify` refuses a unit whose ExecStart does not exist, and this machine has
  // no relay installed: the copy it checks names a stand-in executable there, nothing else changes.
  test.skipIf(!Bun.which("systemd-analyze"))("passes systemd-analyze verify with nothing to say", () => {
    const unit = readFileSync(UNIT, "utf8");
    expect(unit).toContain(`ExecStart=${BINARY} serve`);
    const dir = tempDir();
    const stand = join(dir, "relay");
    writeFileSync(stand, "#!/bin/sh\n");
    chmodSync(stand, 0o755);
    const copy = join(dir, "relay.service");
    writeFileSync(copy, unit.replaceAll(BINARY, stand));
    const r = Bun.spawnSync(["systemd-analyze", "verify", copy], { stdout: "pipe", stderr: "pipe" });
    expect({ code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() }).toEqual({
      code: 0,
      out: "",
    });
  });

  test("docs/operations.md shows the file as it is", () => {
    expect(readFileSync(DOCS, "utf8")).toContain(`\`\`\`ini\n${readFileSync(UNIT, "utf8")}\`\`\``);
  });
});
