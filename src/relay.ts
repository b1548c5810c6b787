// Wires the pipeline together: store → writer → live fanout, and the server in front.
// `startRelay` is what `relay serve` and the tests call.
import type { Server } from "bun";
import type { Config } from "./config/schema.ts";
import { broadcast } from "./fanout/broadcast.ts";
import { LiveIndex } from "./fanout/live-index.ts";
import type { Subscription } from "./fanout/subscription.ts";
import type { RelayContext } from "./ingest/context.ts";
import { newCounters } from "./ingest/context.ts";
import type { Conn, ConnData } from "./server/connection.ts";
import { startServer } from "./server/server.ts";
import { openStore } from "./store/store.ts";
import { Writer } from "./store/writer.ts";
import { nobleBackend } from "./verify/verify.ts";

export interface Relay {
  ctx: RelayContext;
  server: Server<ConnData>;
  conns: Set<Conn>;
  /** ws://host:port as actually bound */
  url: string;
  /** Stops accepting, closes connections, flushes the writer and closes LMDB. */
  stop(): Promise<void>;
}

export function startRelay(config: Config): Relay {
  const store = openStore(config.data);
  const live = new LiveIndex<Subscription>();
  const writer = new Writer(store, config["writer.maxBatch"], (stored) => {
    for (const s of stored) broadcast(live, s.event, s.json, s.serial);
  });
  const ctx: RelayContext = {
    config,
    store,
    writer,
    live,
    verifier: nobleBackend,
    counters: newCounters(),
    startedAt: Date.now(),
  };
  const { server, conns } = startServer(ctx);
  const host = server.hostname?.includes(":") ? `[${server.hostname}]` : server.hostname;
  let stopping: Promise<void> | undefined;
  return {
    ctx,
    server,
    conns,
    url: `ws://${host}:${server.port}`,
    stop() {
      stopping ??= (async () => {
        server.stop(false);
        for (const conn of conns) conn.ws.close(1001, "relay shutting down");
        await writer.drain();
        await store.env.close();
      })();
      return stopping;
    },
  };
}
