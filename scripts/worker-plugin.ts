// Worker threads in a `bun build --compile` binary. A compiled binary holds each entry point as a
// file under a virtual root (/$bunfs/root/ on Linux and macOS), at its path relative to the build's
// `root` (the repository): src/verify/worker.ts is /$bunfs/root/src/verify/worker.js, and Bun maps a
// request for the .ts name to it. Three things break workers there unless patched:
//
// 1. `new URL("./worker.ts", import.meta.url)` in a bundled module: import.meta.url is the URL of
//    the *binary's* main module (/$bunfs/root/<name>), not of the source file, so the relative path
//    points to /$bunfs/root/worker.ts. The plugin rewrites `import.meta.url` in exactly that shape
//    (a relative string literal naming a script) to the source file's own URL inside the binary, so
//    the path resolves as it does under `bun src/main.ts`. `findWorkerEntries` finds those targets
//    so that the build script can add them as entry points.
// 2. piscina starts its own dist/worker.js from `resolve(__dirname, 'worker.js')`, and the bundler
//    bakes __dirname as the absolute path on the build machine. The plugin points it at the copy
//    embedded in the binary instead (the build script adds that file as an entry point).
// 3. Each entry point is bundled with its own copy of piscina, so a worker script's `workerData`
//    and `move` would not be the ones piscina's worker script set up; see (3) below.
//
// piscina also imports the optional native @napi-rs/nice in workers when a pool sets niceIncrement;
// the plugin replaces it with a module that throws, which piscina ignores, so no host-only addon
// ends up in a cross-compiled binary.
import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { BunPlugin } from "bun";

/** The URL of the virtual root a compiled binary keeps its modules under (Linux and macOS). */
export const BUNFS_ROOT_URL = "file:///$bunfs/root/";

const WORKER_URL =
  /new URL\(\s*(["'])(\.{1,2}\/[^"'\n]+?\.(?:ts|tsx|js|mjs|cjs))\1\s*,\s*import\.meta\.url\s*\)/g;
const SOURCE = /\.(ts|tsx|js|mjs)$/;

const toPosix = (p: string): string => p.split(sep).join("/");

/** `path` relative to `root`, failing when it lies outside (the binary could not hold it there). */
export function insideRoot(root: string, path: string): string {
  const rel = toPosix(relative(root, path));
  if (rel.startsWith("../") || rel === "..")
    throw new Error(`${path} is outside the build root ${root}; it cannot be an entry point`);
  return rel;
}

/**
 * Every existing file named as `new URL("./x.ts", import.meta.url)` by a source under `dir`
 * (tests excluded): the worker entry points the code asks for.
 */
export function findWorkerEntries(dir: string): string[] {
  const found = new Set<string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (SOURCE.test(name) && !/\.test\.[jt]sx?$/.test(name)) {
        for (const m of readFileSync(p, "utf8").matchAll(WORKER_URL)) {
          const target = resolve(dirname(p), m[2]!);
          try {
            if (statSync(target).isFile()) found.add(target);
          } catch {
            // a URL to a file that does not exist is the code's problem, not the build's
          }
        }
      }
    }
  };
  walk(dir);
  return [...found].sort();
}

export function workersPlugin(opts: { root: string; srcDir: string; piscinaWorker?: string }): BunPlugin {
  const root = realpathSync(opts.root);
  const srcDir = realpathSync(opts.srcDir);
  return {
    name: "workers",
    setup(build) {
      // (1) relative worker URLs in our own sources
      const ours = new RegExp(
        `^${(srcDir + sep).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}.*\\.(ts|tsx|js|mjs)$`,
      );
      build.onLoad({ filter: ours }, (args) => {
        const path = args.path;
        const src = readFileSync(path, "utf8");
        if (src.search(WORKER_URL) === -1) return undefined;
        const self = JSON.stringify(BUNFS_ROOT_URL + insideRoot(root, path));
        const contents = src.replace(
          WORKER_URL,
          (_m, q: string, rel: string) => `new URL(${q}${rel}${q}, ${self})`,
        );
        return { contents, loader: path.endsWith(".tsx") ? "tsx" : path.endsWith(".ts") ? "ts" : "js" };
      });

      // (2) piscina's own worker script
      build.onLoad({ filter: /[\\/]node_modules[\\/]piscina[\\/]dist[\\/]index\.js$/ }, (args) => {
        const src = readFileSync(args.path, "utf8");
        const call = "(0, node_path_1.resolve)(__dirname, 'worker.js')";
        if (!src.includes(call))
          throw new Error(
            `workers plugin: ${args.path} no longer contains ${call}; update scripts/worker-plugin.ts`,
          );
        const embedded = realpathSync(opts.piscinaWorker ?? join(dirname(args.path), "worker.js"));
        const at = `/$bunfs/root/${insideRoot(root, embedded)}`;
        return { contents: src.replace(call, () => JSON.stringify(at)), loader: "js" };
      });

      // (3) Each entry point is bundled on its own, so a worker script that imports piscina (for
      // `workerData` or `move`) gets a second copy of it beside the one in piscina's worker script,
      // while under `bun` both share one module instance per thread. Make the copies agree: keep
      // piscina's per-thread state on globalThis and make its private symbols registry symbols.
      build.onLoad({ filter: /[\\/]node_modules[\\/]piscina[\\/]dist[\\/](common|symbols)\.js$/ }, (args) => {
        let src = readFileSync(args.path, "utf8");
        const edits: [string, string][] = args.path.endsWith("common.js")
          ? [
              [
                "exports.commonState = {",
                'exports.commonState = globalThis[Symbol.for("piscina.commonState")] ??= {',
              ],
            ]
          : [
              ["Symbol('Piscina.kMovable')", "Symbol.for('Piscina.kMovable')"],
              ["Symbol('Piscina.kWorkerData')", "Symbol.for('Piscina.kWorkerData')"],
            ];
        for (const [from, to] of edits) {
          if (!src.includes(from))
            throw new Error(
              `workers plugin: ${args.path} no longer contains ${from}; update scripts/worker-plugin.ts`,
            );
          src = src.replace(from, () => to);
        }
        return { contents: src, loader: "js" };
      });

      build.onResolve({ filter: /^@napi-rs\/nice$/ }, (args) => ({
        path: args.path,
        namespace: "nice-stub",
      }));
      build.onLoad({ filter: /.*/, namespace: "nice-stub" }, () => ({
        contents: `throw new Error("@napi-rs/nice is not embedded in this binary");`,
        loader: "js",
      }));
    },
  };
}
