// `relay serve` (the default command): loads configuration, starts the relay, reloads live
// settings on SIGHUP or config file change, and stops cleanly on SIGINT/SIGTERM so that every
// event answered `OK true` is on disk.
import { existsSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { redactNatsUrl } from "../cluster/node.ts";
import type { Sources } from "../config/load.ts";
import { loadConfig } from "../config/load.ts";
import { reloadConfig } from "../config/reload.ts";
import type { Config } from "../config/schema.ts";
import { watchConfigFile } from "../config/watch.ts";
import { consumersToRebuild } from "../consumers/registry.ts";
import {
  HANDOVER_SIGNAL,
  REQUEST_FILE,
  removePidFile,
  removeState,
  writePidFile,
} from "../handover/files.ts";
import { FOLLOW_MS, Predecessor } from "../handover/predecessor.ts";
import { announceListening, takeOver } from "../handover/successor.ts";
import { processAlive } from "../lmdb/lock.ts";
import { chooseMapSize } from "../lmdb/map-size.ts";
import { configureLog, log } from "../log.ts";
import type { Relay } from "../relay.ts";
import { POLL_MS, startRelay } from "../relay.ts";
import { closeStore, openStore } from "../store/store.ts";
import { parseArgs } from "./args.ts";
import { tuneRuntime } from "./runtime-env.ts";

export const help = `relay serve [--config FILE] [--host H] [--port P] [--data DIR] [--takeover] [--<key> VALUE]

Starts the relay (WebSocket and HTTP on one port). Settings come from defaults, then the
TOML file, then RELAY_* environment variables, then flags; any schema key works as a flag,
e.g. --limits.maxLimit 1000. See 'relay config --print-default'.

With --takeover, on the port and directory of a running relay (a new binary replacing it): that
relay hands over, stops accepting and serves its open connections until they close
(server.drainSeconds at most), then exits; no client is dropped. 'relay upgrade' does it.`;

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv, ["takeover"]);
  const { config: file, takeover, ...rest } = flags;
  const sources: Sources = { file, env: process.env, flags: rest };
  const config = loadConfig(sources);
  const runtime = tuneRuntime(config);
  configureLog({ level: config["log.level"], format: config["log.format"] });
  // A handover signal that comes while this process starts (it would end it) waits for it.
  let handover = () => {
    handover = () => {};
    queued = true;
  };
  let queued = false;
  process.on(HANDOVER_SIGNAL, () => handover());
  // --takeover: from the relay serving this directory (a new binary replacing it), which
  // hands over and drains; without it a second relay on a directory is refused.
  if (takeover === "true") await checkTakeover(config);
  const taken = takeover === "true" ? await takeOver(config.data) : undefined;
  const relay = startRelay(config, { takenOver: taken?.unlock });
  let stopping: Promise<void> | undefined;
  const shutdown = (why: string) => {
    stopping ??= (async () => {
      log.info("stopping, flushing writes", { why });
      predecessor.close();
      await relay.stop();
      removePidFile(config["server.pidFile"]);
      process.exit(0);
    })();
    return stopping;
  };
  const predecessor = new Predecessor(relay, shutdown);
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  handover = () => predecessor.signalled();
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
  writePidFile(config["server.pidFile"]);
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
  if (taken?.predecessor !== undefined) {
    announceListening(config.data, taken.predecessor);
    followPredecessor(relay, taken.predecessor);
  }
  if (queued) handover();
  return new Promise(() => {}); // runs until a signal
}

/**
 * A takeover that would rebuild a derived index (a new version of it) is refused: the running
 * relay would serve from the log alone meanwhile. Such an upgrade is a restart.
 */
async function checkTakeover(config: Config): Promise<void> {
  if (!existsSync(join(config.data, "data.mdb"))) return;
  const store = openStore(config.data, { mapSizeGb: config["store.mapSizeGb"] });
  try {
    const stale = consumersToRebuild(store, config);
    if (stale.length > 0)
      throw new Error(
        `--takeover: this relay would rebuild ${stale.join(", ")} from the whole log before serving (a new version of it, or turned on): restart instead of taking over`,
      );
  } finally {
    await closeStore(store);
  }
}

/**
 * While the predecessor drains, its clients' events reach this relay's subscribers through the
 * log: look for them often, until it has exited.
 */
function followPredecessor(relay: Relay, pid: number): void {
  relay.followEvery(FOLLOW_MS);
  relay.ctx.peer = pid;
  const watch = setInterval(async () => {
    if (processAlive(pid)) return;
    clearInterval(watch);
    // What it committed before it went is read before readers stop waiting for it.
    await relay.ctx.writer.othersAhead();
    relay.ctx.peer = undefined;
    relay.followEvery(POLL_MS);
    removeState(relay.ctx.config.data, REQUEST_FILE);
    log.info("the previous relay has exited", { pid });
  }, 500);
}
