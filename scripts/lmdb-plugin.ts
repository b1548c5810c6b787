// Build plugin for `bun build --compile`: embeds lmdb-js's native addon (and msgpackr-extract's)
// in the binary. Both packages find their `.node` file at run time through
// node-gyp-build-optional-packages, which searches directories on disk next to the package; inside
// a compiled binary there is no such directory, so the relay dies with "No native build was found".
// This plugin replaces that lookup with a static `require` of the `.node` file of the *target*
// platform's package (@lmdb/lmdb-<platform>-<arch>), which Bun then embeds in the executable.
//
// Which file: under Bun, node-gyp-build-optional-packages reports abi "unsupported" and so always
// loads the N-API build (node.napi[.glibc|.musl].node), never the node.abiNNN ones; we pick the same.
import { readdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import type { BunPlugin } from "bun";

export interface AddonTarget {
  platform: "linux" | "darwin";
  arch: "x64" | "arm64";
  /** linux only */
  libc?: "glibc" | "musl";
}

/** The platform package's name suffix, as in @lmdb/lmdb-linux-arm64. */
export const platformSuffix = (t: AddonTarget): string => `${t.platform}-${t.arch}`;

interface Tags {
  file: string;
  napi: boolean;
  libc?: string;
  runtime?: string;
  armv?: string;
  specificity: number;
}

function parseTags(file: string): Tags | undefined {
  const parts = file.split(".");
  if (parts.pop() !== "node") return undefined;
  const tags: Tags = { file, napi: false, specificity: 0 };
  for (const tag of parts) {
    if (tag === "napi") tags.napi = true;
    else if (tag === "glibc" || tag === "musl") tags.libc = tag;
    else if (tag === "node" || tag === "electron" || tag === "node-webkit") tags.runtime = tag;
    else if (tag.startsWith("armv")) tags.armv = tag.slice(4);
    else continue;
    tags.specificity++;
  }
  return tags;
}

/** The N-API `.node` file in a platform package directory that Bun would load on the target. */
export function pickAddonFile(dir: string, target: AddonTarget): string | undefined {
  const libc = target.platform === "linux" ? (target.libc ?? "glibc") : undefined;
  const candidates = readdirSync(dir)
    .map(parseTags)
    .filter((t): t is Tags => t !== undefined)
    .filter(
      (t) =>
        t.napi &&
        (t.runtime === undefined || t.runtime === "node") &&
        (t.libc === undefined || t.libc === libc) &&
        (t.armv === undefined || (target.arch === "arm64" && t.armv === "8")),
    )
    .sort((a, b) => b.specificity - a.specificity);
  return candidates[0] && join(dir, candidates[0].file);
}

export interface ResolvedAddon {
  /** absolute path of the `.node` file */
  file: string;
  /** name@version of the platform package it came from */
  from: string;
}

/** Platform packages fetched for the build (scripts/npm-platform-package.ts): name → directory. */
export type FetchedPackages = Record<string, string>;

/**
 * Finds `<scope>/<name>-<platform>-<arch>` as seen from the parent package's directory (nested or
 * hoisted), or among the packages fetched for the build, checks its version equals the parent's,
 * and picks the addon file. Throws when it is in neither place.
 */
export function resolveAddon(
  parentDir: string,
  platformPkg: string,
  target: AddonTarget,
  fetched: FetchedPackages = {},
): ResolvedAddon {
  const parent = JSON.parse(readFileSync(join(parentDir, "package.json"), "utf8")) as {
    name: string;
    version: string;
  };
  let pkgDir: string;
  try {
    pkgDir = dirname(realpathSync(Bun.resolveSync(`${platformPkg}/package.json`, parentDir)));
  } catch {
    const dir = fetched[platformPkg];
    if (!dir)
      throw new Error(
        `${parent.name}: ${platformPkg} is neither installed nor fetched, so its native addon cannot be embedded`,
      );
    pkgDir = dir;
  }
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string };
  if (pkg.version !== parent.version)
    throw new Error(
      `${parent.name}@${parent.version} needs ${platformPkg}@${parent.version}, found ${pkg.version} in ${pkgDir}; remove it (npm ci does) and the build fetches the locked one`,
    );
  const file = pickAddonFile(pkgDir, target);
  if (!file)
    throw new Error(
      `${platformPkg}@${pkg.version} in ${pkgDir} has no N-API build for ${JSON.stringify(target)}`,
    );
  return { file, from: `${platformPkg}@${pkg.version}` };
}

/** Replaces `pattern` in `source`, failing loudly when the package no longer has that shape. */
function patch(source: string, path: string, pattern: RegExp | string, replacement: string): string {
  const found = typeof pattern === "string" ? source.includes(pattern) : pattern.test(source);
  if (!found)
    throw new Error(
      `native-addons plugin: ${path} no longer contains ${String(pattern)}; lmdb's loader changed, update scripts/lmdb-plugin.ts`,
    );
  return source.replace(pattern, () => replacement);
}

export interface NativeAddonsReport {
  /** what was embedded, one line each, for the build log */
  embedded: string[];
  /** true once lmdb's loader was rewritten; the build script fails when lmdb was bundled without it */
  lmdbPatched: boolean;
}

export function nativeAddonsPlugin(
  target: AddonTarget,
  report: NativeAddonsReport,
  fetched: FetchedPackages = {},
): BunPlugin {
  const suffix = platformSuffix(target);
  return {
    name: "native-addons",
    setup(build) {
      // lmdb, ESM entry (what Bun resolves `import "lmdb"` to): native.js calls loadNAPI(dirName).
      // The CommonJS build (dist/index.cjs) inlines the same call; patch it too in case anything
      // ever `require`s lmdb.
      build.onLoad({ filter: /[\\/]node_modules[\\/]lmdb[\\/](native\.js|dist[\\/]index\.cjs)$/ }, (args) => {
        const lmdbDir = args.path.replace(/[\\/](native\.js|dist[\\/]index\.cjs)$/, "");
        const addon = resolveAddon(lmdbDir, `@lmdb/lmdb-${suffix}`, target, fetched);
        let src = readFileSync(args.path, "utf8");
        src = patch(
          src,
          args.path,
          /loadNAPI(?:__default\["default"\])?\(dirName\)/,
          `require(${JSON.stringify(addon.file)})`,
        );
        src = src.replace("import loadNAPI from 'node-gyp-build-optional-packages';", "");
        report.lmdbPatched = true;
        const line = `lmdb addon: ${addon.from}/${addon.file.split(/[\\/]/).pop()}`;
        if (!report.embedded.includes(line)) report.embedded.push(line);
        return { contents: src, loader: "js" };
      });

      // lmdb reads dict/dict.txt from beside its sources when a database uses compression (this
      // relay opens its store with compression off, but keep the binary complete): embed the file.
      build.onLoad({ filter: /[\\/]node_modules[\\/]lmdb[\\/]open\.js$/ }, (args) => {
        const dict = join(dirname(args.path), "dict", "dict.txt");
        let src = readFileSync(args.path, "utf8");
        src = patch(src, args.path, "'./dict/dict.txt',", "__lmdbDictPath,");
        src = `import __lmdbDict from ${JSON.stringify(dict)} with { type: "file" };\nconst __lmdbDictPath = Bun.pathToFileURL(__lmdbDict).href;\n${src}`;
        return { contents: src, loader: "js" };
      });

      // msgpackr (lmdb's value encoder) optionally loads msgpackr-extract to decode strings faster
      // and falls back to plain JavaScript when that throws. Embed the target's build when it is
      // installed; otherwise make the require throw so msgpackr takes its fallback.
      build.onLoad({ filter: /[\\/]node_modules[\\/]msgpackr-extract[\\/]index\.js$/ }, (args) => {
        const src = readFileSync(args.path, "utf8");
        const loader = "require('node-gyp-build-optional-packages')(__dirname)";
        let replacement: string;
        try {
          const addon = resolveAddon(
            dirname(args.path),
            `@msgpackr-extract/msgpackr-extract-${suffix}`,
            target,
            fetched,
          );
          replacement = `require(${JSON.stringify(addon.file)})`;
          report.embedded.push(`msgpackr-extract addon: ${addon.from}/${addon.file.split(/[\\/]/).pop()}`);
        } catch (e) {
          replacement = `(() => { throw new Error("msgpackr-extract is not embedded in this binary"); })()`;
          report.embedded.push(
            `msgpackr-extract addon: none (${(e as Error).message.split("\n")[0]!.replace(/\.$/, "")}); msgpackr decodes in JavaScript`,
          );
        }
        return { contents: patch(src, args.path, loader, replacement), loader: "js" };
      });
    },
  };
}
