// Builds the relay as one executable: `bun scripts/build.ts [--target T] [--outfile dist/relay]`.
// The binary needs no Bun, Node or node_modules where it runs; see docs/operations.md, "The binary".
//
//   --target   bun-linux-x64 | bun-linux-arm64 | bun-darwin-arm64 | bun-darwin-x64, optionally with
//              -baseline/-modern (x64) and -musl (linux); default: the machine running the build
//   --outfile  where to write the binary (default dist/relay)
//
// Entry points: src/main.ts, plus every worker script the binary may start, each of which must be
// an entry point of the compile or the worker cannot be found at run time:
//   - files named as `new URL("./x.ts", import.meta.url)` in src/ (found automatically),
//   - piscina's own worker script (when piscina is installed),
//   - EXTRA_ENTRYPOINTS below, for workers started some other way.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  type AddonTarget,
  type NativeAddonsReport,
  nativeAddonsPlugin,
  platformSuffix,
  resolveAddon,
} from "./lmdb-plugin.ts";
import { secp256k1Plugin } from "./secp256k1-plugin.ts";
import { findWorkerEntries, insideRoot, workersPlugin } from "./worker-plugin.ts";

/** Worker files (relative to the repository) to embed besides those found automatically. */
const EXTRA_ENTRYPOINTS: string[] = [];

const ROOT = realpathSync(join(import.meta.dir, ".."));
const TARGETS = ["bun-linux-x64", "bun-linux-arm64", "bun-darwin-arm64", "bun-darwin-x64"];
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
      `unsupported --target ${t}; one of ${TARGETS.join(", ")} (x64 may add -baseline or -modern, linux -musl)`,
    );
  const platform = m[1] as AddonTarget["platform"];
  const arch = m[2] as AddonTarget["arch"];
  return platform === "linux" ? { platform, arch, libc: m[4] ? "musl" : "glibc" } : { platform, arch };
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
 * Before the (possibly downloading) compile: are the target's addon packages installed? lmdb's is
 * required; msgpackr-extract's is optional (msgpackr falls back to JavaScript without it).
 */
function checkAddons(target: AddonTarget): void {
  const missing: string[] = [];
  for (const [name, scope] of [
    ["lmdb", "@lmdb/lmdb"],
    ["msgpackr-extract", "@msgpackr-extract/msgpackr-extract"],
  ] as const) {
    const dir = packageDir(name);
    if (!dir) {
      if (name === "lmdb") fail("lmdb is not installed; run npm ci");
      continue;
    }
    try {
      resolveAddon(dir, `${scope}-${platformSuffix(target)}`, target);
    } catch {
      const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string };
      missing.push(`${scope}-${platformSuffix(target)}@${version}`);
    }
  }
  const command = (pkgs: string[]) => `npm install --no-save --force ${pkgs.join(" ")}`;
  const required = missing.filter((m) => m.startsWith("@lmdb/"));
  const optional = missing.filter((m) => !m.startsWith("@lmdb/"));
  const optionalNote = optional.length
    ? `${optional.join(", ")} (optional; not published for every platform and version, and without it msgpackr decodes in JavaScript): ${command(optional)}`
    : "";
  if (required.length > 0)
    fail(
      `lmdb's native addon for ${platformSuffix(target)} is not installed.\n  Fetch it with: ${command(required)}` +
        (optionalNote ? `\n  Optionally also ${optionalNote}` : ""),
    );
  if (optionalNote) console.warn(`build: note: not embedding ${optionalNote}`);
}

export async function build(opts: { target?: string; outfile: string }): Promise<string> {
  const target = opts.target ? parseTarget(opts.target) : hostTarget();
  checkAddons(target);
  const outfile = resolve(opts.outfile);
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
        nativeAddonsPlugin(target, report),
        secp256k1Plugin(target, supportedHost() ? hostTarget() : undefined, report),
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
      `built ${rel(outfile)} for ${opts.target ?? `this machine (${target.platform}-${target.arch}${target.libc ? `-${target.libc}` : ""})`} in ${Math.round(performance.now() - started)} ms: ${(size / 2 ** 20).toFixed(1)} MiB`,
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
      outfile: { type: "string", default: join(ROOT, "dist", "relay") },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(`usage: bun scripts/build.ts [--target ${TARGETS.join("|")}] [--outfile dist/relay]`);
    process.exit(0);
  }
  await build({ outfile: values.outfile, ...(values.target ? { target: values.target } : {}) });
}
