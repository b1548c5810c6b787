// Builds the relay as one executable per target:
//
//   bun scripts/build.ts [--target T|all] [--outfile FILE]      (npm run build -- --target all)
//
//   --target   all: bun-linux-x64 and bun-linux-arm64, the files a release ships;
//              or one of bun-linux-x64 | bun-linux-arm64 | bun-darwin-arm64 | bun-darwin-x64,
//              optionally with -baseline/-modern (x64) and -musl (linux);
//              default: the machine running the build
//   --outfile  where to write the binary (one target only; default dist/relay-<platform>-<arch>)
//
// Each binary needs no Bun, Node or node_modules where it runs, and carries its target's lmdb
// addon and libsecp256k1 (fetched into .build-cache/ when the build machine has no copy of its
// architecture: scripts/npm-platform-package.ts, scripts/debian-secp256k1.ts). dist/SHA256SUMS is
// written anew after every build, for every dist/relay-* file. See docs/operations.md, "The binary".
//
// Entry points: src/main.ts, plus every worker script the binary may start, each of which must be
// an entry point of the compile or the worker cannot be found at run time:
//   - files named as `new URL("./x.ts", import.meta.url)` in src/ (found automatically),
//   - piscina's own worker script (when piscina is installed),
//   - EXTRA_ENTRYPOINTS below, for workers started some other way.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { BunPlugin } from "bun";
import { writeChecksums } from "./checksums.ts";
import {
  type AddonTarget,
  type FetchedPackages,
  type NativeAddonsReport,
  nativeAddonsPlugin,
  platformSuffix,
  resolveAddon,
} from "./lmdb-plugin.ts";
import { fetchPlatformPackage } from "./npm-platform-package.ts";
import { chooseSecp256k1, secp256k1Plugin } from "./secp256k1-plugin.ts";
import { findWorkerEntries, insideRoot, workersPlugin } from "./worker-plugin.ts";

/** Worker files (relative to the repository) to embed besides those found automatically. */
const EXTRA_ENTRYPOINTS: string[] = [];

const ROOT = realpathSync(join(import.meta.dir, ".."));
const DIST = join(ROOT, "dist");
/** What the build fetches (platform packages, Debian's libsecp256k1); safe to delete. */
const CACHE = join(ROOT, ".build-cache");
const TARGETS = ["bun-linux-x64", "bun-linux-arm64", "bun-darwin-arm64", "bun-darwin-x64"];
/** `--target all`: the binaries a release ships. */
const RELEASE_TARGETS = ["bun-linux-x64", "bun-linux-arm64"];
const TARGET_RE = /^bun-(linux|darwin)-(x64|arm64)(-baseline|-modern)?(-musl)?$/;

function fail(msg: string): never {
  console.error(`build: ${msg}`);
  process.exit(1);
}

function hostTarget(): AddonTarget {
  const { platform, arch } = process;
  if ((platform !== "linux" && platform !== "darwin") || (arch !== "x64" && arch !== "arm64"))
    fail(`no supported target for this machine (${platform}-${arch}); pass --target`);
  if (platform === "darwin") return { platform, arch };
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)
    ?.header;
  return { platform, arch, libc: header?.glibcVersionRuntime ? "glibc" : "musl" };
}

const supportedHost = (): boolean =>
  (process.platform === "linux" || process.platform === "darwin") &&
  (process.arch === "x64" || process.arch === "arm64");

function parseTarget(t: string): AddonTarget {
  const m = TARGET_RE.exec(t);
  if (!m || (m[1] === "darwin" && m[4]) || (m[2] === "arm64" && m[3]))
    fail(
      `unsupported --target ${t}; all, or one of ${TARGETS.join(", ")} (x64 may add -baseline or -modern, linux -musl)`,
    );
  const platform = m[1] as AddonTarget["platform"];
  const arch = m[2] as AddonTarget["arch"];
  return platform === "linux" ? { platform, arch, libc: m[4] ? "musl" : "glibc" } : { platform, arch };
}

/** `linux-arm64`, `linux-x64-musl`: the binary's name after `relay-`, and what --version says. */
function targetName(target: AddonTarget, flag?: string): string {
  if (flag) return flag.replace(/^bun-/, "");
  return `${target.platform}-${target.arch}${target.libc === "musl" ? "-musl" : ""}`;
}

function piscinaWorker(): string | undefined {
  try {
    return realpathSync(join(dirname(Bun.resolveSync("piscina/package.json", ROOT)), "dist", "worker.js"));
  } catch {
    return undefined;
  }
}

/** The directory of an installed package, found from the file it resolves to. */
function packageDir(name: string): string | undefined {
  let dir: string;
  try {
    dir = dirname(realpathSync(Bun.resolveSync(name, ROOT)));
  } catch {
    return undefined;
  }
  for (; dir !== dirname(dir); dir = dirname(dir)) {
    try {
      if ((JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string }).name === name)
        return dir;
    } catch {
      // no package.json at this level
    }
  }
  return undefined;
}

/**
 * Before the compile: the target's addon packages, installed or fetched at the parent package's
 * version (as the lockfile pins it). lmdb's is required; msgpackr-extract's is optional
 * (msgpackr falls back to JavaScript without it, and it is not published for every platform).
 */
function locateAddons(target: AddonTarget): FetchedPackages {
  const fetched: FetchedPackages = {};
  for (const [name, scope] of [
    ["lmdb", "@lmdb/lmdb"],
    ["msgpackr-extract", "@msgpackr-extract/msgpackr-extract"],
  ] as const) {
    const dir = packageDir(name);
    if (!dir) {
      if (name === "lmdb") fail("lmdb is not installed; run npm ci");
      continue;
    }
    const platformPkg = `${scope}-${platformSuffix(target)}`;
    try {
      resolveAddon(dir, platformPkg, target);
      continue; // installed
    } catch {
      // fetch it below
    }
    const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string };
    try {
      fetched[platformPkg] = fetchPlatformPackage(ROOT, CACHE, platformPkg, version);
      resolveAddon(dir, platformPkg, target, fetched);
    } catch (e) {
      if (name === "lmdb") fail(`lmdb's native addon for ${platformSuffix(target)}: ${(e as Error).message}`);
      delete fetched[platformPkg];
      console.warn(
        `build: note: not embedding ${platformPkg}@${version} (${(e as Error).message.split("\n")[0]}); msgpackr decodes in JavaScript`,
      );
    }
  }
  return fetched;
}

/** Replaces src/cli/built-for.ts: the target `relay --version` names. */
function builtForPlugin(name: string): BunPlugin {
  return {
    name: "built-for",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]cli[\\/]built-for\.ts$/ }, () => ({
        loader: "ts",
        contents: `export const builtFor: string | undefined = ${JSON.stringify(name)};`,
      }));
    },
  };
}

/** Builds one binary; `flag` is the --target given, if any (else the machine running the build). */
export async function build(opts: { target?: string; outfile?: string }): Promise<string> {
  const target = opts.target ? parseTarget(opts.target) : hostTarget();
  const name = targetName(target, opts.target);
  const fetched = locateAddons(target);
  const secp = chooseSecp256k1(target, supportedHost() ? hostTarget() : undefined, CACHE);
  if ("none" in secp) {
    // A release binary without it would verify at an eighth of the speed on every host lacking
    // the library: refuse, unless the target is one Debian's package cannot serve anyway.
    if (target.platform === "linux" && target.libc === "glibc")
      fail(`no libsecp256k1 of ${name} to embed: ${secp.none}`);
    console.warn(`build: note: not embedding libsecp256k1 in the ${name} binary: ${secp.none}`);
  }
  const outfile = resolve(opts.outfile ?? join(DIST, `relay-${name}`));
  mkdirSync(dirname(outfile), { recursive: true });

  const piscina = piscinaWorker();
  const workers = [
    ...findWorkerEntries(join(ROOT, "src")),
    ...EXTRA_ENTRYPOINTS.map((p) => join(ROOT, p)),
    ...(piscina ? [piscina] : []),
  ];
  for (const w of workers) {
    if (!existsSync(w)) fail(`worker entry point ${w} does not exist`);
    insideRoot(ROOT, w);
  }
  const entrypoints = [join(ROOT, "src", "main.ts"), ...new Set(workers)];

  const report: NativeAddonsReport = { embedded: [], lmdbPatched: false };
  if ("lib" in secp)
    report.embedded.push(`libsecp256k1: ${secp.lib.label} (${relative(ROOT, secp.lib.file)})`);
  const started = performance.now();
  let result: Awaited<ReturnType<typeof Bun.build>>;
  try {
    result = await Bun.build({
      entrypoints,
      root: ROOT,
      compile: opts.target ? { target: opts.target as Bun.Build.CompileTarget, outfile } : { outfile },
      minify: true,
      // Parsing moves to build time: the relay answers its first request about twice as soon.
      bytecode: true,
      // Embedded (zstd) so stack traces name src/ lines; the .map files it also writes are removed.
      sourcemap: "linked",
      plugins: [
        nativeAddonsPlugin(target, report, fetched),
        secp256k1Plugin("lib" in secp ? secp.lib : undefined),
        builtForPlugin(name),
        workersPlugin({
          root: ROOT,
          srcDir: join(ROOT, "src"),
          ...(piscina ? { piscinaWorker: piscina } : {}),
        }),
      ],
    });
  } catch (e) {
    const logs = (e as AggregateError).errors ?? [e];
    fail(`bun build failed:\n${logs.map((l: unknown) => `  ${String(l)}`).join("\n")}`);
  }
  if (!result.success) fail(`bun build failed:\n${result.logs.map((l) => `  ${String(l)}`).join("\n")}`);
  for (const o of result.outputs) if (o.kind === "sourcemap") rmSync(o.path, { force: true });
  if (!report.lmdbPatched)
    fail(
      "lmdb was bundled without going through the native-addons plugin; the binary could not open its store",
    );

  const size = statSync(outfile).size;
  const rel = (p: string) => relative(ROOT, p) || p;
  console.log(
    [
      `built ${rel(outfile)} for ${opts.target ?? `this machine (${name})`} in ${Math.round(performance.now() - started)} ms: ${(size / 2 ** 20).toFixed(1)} MiB`,
      `  entry points: ${entrypoints.map(rel).join(", ")}`,
      ...report.embedded.map((l) => `  ${l}`),
    ].join("\n"),
  );
  return outfile;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      target: { type: "string" },
      outfile: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(
      `usage: bun scripts/build.ts [--target all|${TARGETS.join("|")}] [--outfile FILE]\n` +
        "default: the machine running the build, written to dist/relay-<platform>-<arch>",
    );
    process.exit(0);
  }
  const targets = values.target === "all" ? RELEASE_TARGETS : [values.target];
  if (values.outfile && targets.length > 1)
    fail("--outfile names one file; --target all writes one per target");
  for (const target of targets)
    await build({
      ...(target ? { target } : {}),
      ...(values.outfile ? { outfile: values.outfile } : {}),
    });
  console.log(`wrote ${relative(ROOT, writeChecksums(DIST))}`);
}
