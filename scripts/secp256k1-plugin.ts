// Build plugin for `bun build --compile`: embeds the build machine's libsecp256k1 in the binary
// (as the lmdb addon is embedded), replacing src/verify/embedded.ts with a module that imports
// the library as a file of the executable. At run time the relay opens the host's library if it
// has one and this copy otherwise (src/verify/native.ts), so a downloaded binary verifies
// natively on any glibc Linux of its architecture. Only a library of the machine running the
// build can be embedded, so a build for another target embeds none (and says so).
import { existsSync, realpathSync } from "node:fs";
import { basename } from "node:path";
import type { BunPlugin } from "bun";
import { NATIVE_CANDIDATES, probeNativeBackend } from "../src/verify/native.ts";
import type { AddonTarget } from "./lmdb-plugin.ts";

/** The file of a libsecp256k1 on this machine that loads and passes the self-test, if any. */
export function findSecp256k1(): string | undefined {
  for (const candidate of NATIVE_CANDIDATES) {
    if (!candidate.startsWith("/") || !existsSync(candidate)) continue;
    const probe = probeNativeBackend(candidate);
    if (probe.backend && probe.path === candidate) return realpathSync(candidate);
  }
  return undefined;
}

export interface EmbeddedLibraryReport {
  /** lines for the build summary */
  embedded: string[];
}

export function secp256k1Plugin(
  target: AddonTarget,
  host: AddonTarget | undefined,
  report: EmbeddedLibraryReport,
): BunPlugin {
  const sameMachine =
    host !== undefined &&
    target.platform === host.platform &&
    target.arch === host.arch &&
    target.libc === host.libc;
  const lib = sameMachine ? findSecp256k1() : undefined;
  if (lib) report.embedded.push(`libsecp256k1: ${lib}`);
  else if (!sameMachine)
    console.warn("build: note: not embedding libsecp256k1 (only the build machine's own can be embedded)");
  else
    console.warn(
      "build: note: not embedding libsecp256k1: none found on this machine (apt-get install libsecp256k1-1); " +
        "the binary will use the host's, or verify with @noble/curves",
    );
  return {
    name: "embedded-secp256k1",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]verify[\\/]embedded\.ts$/ }, () => ({
        loader: "ts",
        contents: lib
          ? [
              `import lib from ${JSON.stringify(lib)} with { type: "file" };`,
              "export const embeddedLibrary: string | undefined = lib;",
              `export const embeddedFrom: string | undefined = ${JSON.stringify(basename(lib))};`,
            ].join("\n")
          : [
              "export const embeddedLibrary: string | undefined = undefined;",
              "export const embeddedFrom: string | undefined = undefined;",
            ].join("\n"),
      }));
    },
  };
}
