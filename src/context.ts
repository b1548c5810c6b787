// The composition root's shared state: what startRelay builds and every handler is given
// (configuration, the store and its writer, the live index, the verifier, moderation, the open
// connections) and the counters /metrics serves. It sits beside relay.ts, above every layer: a
// layer names it, and nothing in it imports a layer that imports it back.
import type { Api } from "./api/start.ts";
import type { ClusterNode } from "./cluster/node.ts";
import type { Config } from "./config/schema.ts";
import type { Derived } from "./derived.ts";
import type { LiveIndex } from "./fanout/live-index.ts";
import type { Subscription } from "./fanout/subscription.ts";
import type { PendingGate } from "./ingest/pending.ts";
import type { PolicyPlugin } from "./ingest/plugin.ts";
import type { Moderation } from "./manage/moderation.ts";
import type { Conn } from "./server/connection.ts";
import type { RateLimiter } from "./server/ratelimit.ts";
import type { Expiration } from "./store/expiration.ts";
import type { Store } from "./store/store.ts";
import type { Writer } from "./store/writer.ts";
import type { VerifyPool } from "./verify/pool.ts";
import type { SchnorrBackend } from "./verify/verify.ts";

/** What /metrics counts, shared by every connection. */
export interface Counters {
  framesIn: Record<string, number>;
  framesOut: Record<string, number>;
  eventsAccepted: number;
  acceptedByKind: Record<string, number>;
  eventsRejected: Record<string, number>;
  /** WebSocket upgrades answered with an error, by reason */
  connectionsRefused: Record<string, number>;
  queriesByIndex: Record<string, number>;
  /** seconds spent answering stored queries, by the index of their first filter */
  querySeconds: Record<string, number>;
}

export interface RelayContext {
  config: Config;
  store: Store;
  writer: Writer;
  live: LiveIndex<Subscription>;
  /** in-thread backend (AUTH answers, imports) */
  verifier: SchnorrBackend;
  /** batched, off-thread verification of published events */
  verifyPool: VerifyPool;
  counters: Counters;
  startedAt: number;
  /** whether a URL names this relay (NIP-42 relay tags, NIP-62 requests) */
  isOwnUrl: (url: string) => boolean;
  expiration: Expiration;
  /** search, counters and the runner that keeps them */
  derived: Derived;
  rates: RateLimiter;
  /** EVENTs read and not yet answered: past its bound, sockets are paused */
  pending: PendingGate;
  plugin: PolicyPlugin | undefined;
  /** the HTTP API's trending window and relay prober (src/api/), set by startRelay */
  api?: Api;
  /** open WebSocket connections */
  conns: Set<Conn>;
  /** bans, allow lists, blocked addresses and NIP-11 fields set through NIP-86 (src/manage/) */
  moderation: Moderation;
  /** this node's part in a NATS JetStream cluster (src/cluster/), when cluster.natsUrl is set */
  cluster?: ClusterNode;
}

export const newCounters = (): Counters => ({
  framesIn: {},
  framesOut: {},
  eventsAccepted: 0,
  acceptedByKind: {},
  eventsRejected: {},
  connectionsRefused: {},
  queriesByIndex: {},
  querySeconds: {},
});

export const bump = (rec: Record<string, number>, key: string, by = 1): void => {
  rec[key] = (rec[key] ?? 0) + by;
};
