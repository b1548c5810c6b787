// Build plugin for `bun build --compile`: embeds a libsecp256k1 of the target's architecture in the
// binary (as the lmdb addon is embedded), replacing src/verify/embedded.ts with a module that
// imports the library as a file of the executable. At run time the relay opens the host's
// library if it has one and this copy otherwise (src/verify/native.ts), so a downloaded binary
// verifies natively on any glibc Linux of its architecture. Which library: `chooseSecp256k1`.
import { existsSync, realpathSync } from "node:fs";
import { basename } from "node:path";
import type { BunPlugin } from "bun";
import { NATIVE_CANDIDATES, probeNativeBackend } from "../src/verify/native.ts";
import { debianSecp256k1, type EmbeddedLibrary } from "./debian-secp256k1.ts";
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

const sameMachine = (a: AddonTarget, b: AddonTarget | undefined): boolean =>
  b !== undefined && a.platform === b.platform && a.arch === b.arch && a.libc === b.libc;

/**
 * The library to embed for `target`: for glibc Linux, Debian's package of the target's
 * architecture (the same provenance for every Linux binary, fetched when missing); otherwise, or
 * when that cannot be fetched, the build machine's own library if the target is this machine.
 * Returns the library, or why there is none. A library this machine can load must pass the
 * BIP-340 self-test here; one of another architecture is checked by the smoke test under qemu.
 */
export function chooseSecp256k1(
  target: AddonTarget,
  host: AddonTarget | undefined,
  cacheDir: string,
): { lib: EmbeddedLibrary } | { none: string } {
  const local = sameMachine(target, host);
  let why = "";
  if (target.platform === "linux" && target.libc === "glibc") {
    try {
      const lib = debianSecp256k1(cacheDir, target.arch);
      if (local) {
        const probe = probeNativeBackend(lib.file);
        if (!probe.backend || probe.path !== lib.file)
          throw new Error(`${lib.file} does not pass the self-test: ${probe.errors.join("; ")}`);
      }
      return { lib };
    } catch (e) {
      why = (e as Error).message;
    }
  }
  const own = local ? findSecp256k1() : undefined;
  if (own) return { lib: { file: own, label: `${basename(own)} of the build machine` } };
  return {
    none:
      (why ? `${why}; ` : "") +
      (local
        ? "none found on this machine (apt-get install libsecp256k1-1)"
        : "only a glibc Linux target can take Debian's, and only the build machine's own can be taken otherwise"),
  };
}

export function secp256k1Plugin(lib: EmbeddedLibrary | undefined): BunPlugin {
  return {
    name: "embedded-secp256k1",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]verify[\\/]embedded\.ts$/ }, () => ({
        loader: "ts",
        contents: lib
          ? [
              `import lib from ${JSON.stringify(lib.file)} with { type: "file" };`,
              "export const embeddedLibrary: string | undefined = lib;",
              `export const embeddedFrom: string | undefined = ${JSON.stringify(lib.label)};`,
            ].join("\n")
          : [
              "export const embeddedLibrary: string | undefined = undefined;",
              "export const embeddedFrom: string | undefined = undefined;",
            ].join("\n"),
      }));
    },
  };
}
