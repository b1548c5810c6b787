// `relay serve` (the default command): loads configuration, starts the relay, stops cleanly on
// SIGINT/SIGTERM so that every event answered `OK true` is on disk.
import { loadConfig } from "../config/load.ts";
import { startRelay } from "../relay.ts";
import { parseArgs } from "./args.ts";

export const help = `relay serve [--config FILE] [--host H] [--port P] [--data DIR] [--<key> VALUE]

Starts the relay (WebSocket and HTTP on one port). Settings come from defaults, then the
TOML file, then RELAY_* environment variables, then flags; any schema key works as a flag,
e.g. --limits.maxLimit 1000. See 'relay config --print-default'.`;

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv);
  const { config: file, ...rest } = flags;
  const config = loadConfig({ file, env: process.env, flags: rest });
  const relay = startRelay(config);
  console.log(`relay listening on ${relay.url} (data in ${config.data}, verify: ${relay.ctx.verifier.name})`);
  const shutdown = async (signal: string) => {
    console.log(`${signal}: stopping, flushing writes`);
    await relay.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  return new Promise(() => {}); // runs until a signal
}
