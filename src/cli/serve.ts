// `relay serve` (the default command): loads configuration, starts the relay, reloads live
// settings on SIGHUP or config file change, and stops cleanly on SIGINT/SIGTERM so that every
// event answered `OK true` is on disk.
import { watch } from "node:fs";
import { loadConfig } from "../config/load.ts";
import { reloadConfig } from "../config/reload.ts";
import { startRelay } from "../relay.ts";
import { tuneAllocator } from "./allocator.ts";
import { parseArgs } from "./args.ts";

export const help = `relay serve [--config FILE] [--host H] [--port P] [--data DIR] [--<key> VALUE]

Starts the relay (WebSocket and HTTP on one port). Settings come from defaults, then the
TOML file, then RELAY_* environment variables, then flags; any schema key works as a flag,
e.g. --limits.maxLimit 1000. See 'relay config --print-default'.`;

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv);
  const { config: file, ...rest } = flags;
  const config = loadConfig({ file, env: process.env, flags: rest });
  tuneAllocator(config);
  const relay = startRelay(config);
  const shutdown = async (signal: string) => {
    console.log(`${signal}: stopping, flushing writes`);
    await relay.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  const reload = (why: string) => {
    try {
      const r = reloadConfig(relay.ctx.config, { file, env: process.env, flags: rest });
      relay.ctx.config = r.config;
      console.log(
        `${why}: configuration reloaded (${r.changed.length ? r.changed.join(", ") : "no changes"})`,
      );
      if (r.ignored.length) console.warn(`${why}: restart to apply ${r.ignored.join(", ")}`);
    } catch (e) {
      console.error(
        `${why}: configuration not reloaded, the previous one stays in force: ${(e as Error).message}`,
      );
    }
  };
  process.on("SIGHUP", () => reload("SIGHUP"));
  if (file) {
    let pending: ReturnType<typeof setTimeout> | undefined;
    // Editors write files in several steps; reload once things settle.
    watch(file, () => {
      clearTimeout(pending);
      pending = setTimeout(() => reload(`${file} changed`), 200);
    });
  }
  // Announce only once the signal handlers are in place, so a supervisor may stop us at once.
  console.log(`relay listening on ${relay.url} (data in ${config.data}, ${relay.ctx.verifyPool.reason})`);
  return new Promise(() => {}); // runs until a signal
}
