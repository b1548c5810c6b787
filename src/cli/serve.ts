// `relay serve` (the default command): loads configuration, starts the relay, reloads live
// settings on SIGHUP or config file change, and stops cleanly on SIGINT/SIGTERM so that every
// event answered `OK true` is on disk.
import pkg from "../../package.json" with { type: "json" };
import { redactNatsUrl } from "../cluster/node.ts";
import type { Sources } from "../config/load.ts";
import { loadConfig } from "../config/load.ts";
import { reloadConfig } from "../config/reload.ts";
import { watchConfigFile } from "../config/watch.ts";
import { configureLog, log } from "../log.ts";
import { startRelay } from "../relay.ts";
import { chooseMapSize } from "../store/map-size.ts";
import { parseArgs } from "./args.ts";
import { tuneRuntime } from "./runtime-env.ts";

export const help = `relay serve [--config FILE] [--host H] [--port P] [--data DIR] [--<key> VALUE]

Starts the relay (WebSocket and HTTP on one port). Settings come from defaults, then the
TOML file, then RELAY_* environment variables, then flags; any schema key works as a flag,
e.g. --limits.maxLimit 1000. See 'relay config --print-default'.`;

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv);
  const { config: file, ...rest } = flags;
  const sources: Sources = { file, env: process.env, flags: rest };
  const config = loadConfig(sources);
  const runtime = tuneRuntime(config);
  const relay = startRelay(config);
  const shutdown = async (signal: string) => {
    log.info("stopping, flushing writes", { signal });
    await relay.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  const reload = (why: string) => {
    try {
      const r = reloadConfig(relay.ctx.config, sources);
      relay.ctx.config = r.config;
      configureLog({ level: r.config["log.level"], format: r.config["log.format"] });
      log.info("configuration reloaded", { trigger: why, changed: r.changed.join(",") || "none" });
      if (r.ignored.length) log.warn("restart to apply", { trigger: why, keys: r.ignored.join(",") });
    } catch (e) {
      log.error("configuration not reloaded, the previous one stays in force", {
        trigger: why,
        error: (e as Error).message,
      });
    }
  };
  process.on("SIGHUP", () => reload("SIGHUP"));
  if (file) watchConfigFile(file, () => reload("file changed"));
  // Announce only once the signal handlers are in place, so a supervisor may stop us at once.
  // This first line is the start-up summary; tests and scripts read the URL from it.
  const c = relay.ctx.config;
  log.info(`relay listening on ${relay.url}`, {
    version: pkg.version,
    pid: process.pid,
    config: file ?? "none",
    data: c.data,
    mapSize: chooseMapSize(c["store.mapSizeGb"]).how,
    runtime,
    verify: relay.ctx.verifyPool.reason,
    search: c["search.enabled"],
    api: c["api.enabled"],
    countRegisters: c["count.registers"],
    auth: c["auth.writes"] || c["auth.reads"] ? `writes=${c["auth.writes"]},reads=${c["auth.reads"]}` : "off",
    realIp: c["http.realIpHeader"] || "peer",
    cluster: relay.ctx.cluster
      ? `node=${relay.ctx.cluster.nodeId},stream=${c["cluster.stream"]},okAfter=${c["cluster.okAfter"]},nats=${redactNatsUrl(c["cluster.natsUrl"])}`
      : "off",
    log: `${c["log.level"]},${c["log.format"]}`,
  });
  return new Promise(() => {}); // runs until a signal
}
