// The composition root's shared state: what startRelay builds and every handler is given
// (configuration, the store and its writer, the live index, the verifier, the consumers) and the
// counters /metrics serves. The layers that read it also own parts of it (the open connections
// and rate limits in server/, the ingest gate and the policy plugin in ingest/, moderation in
// manage/, the API in api/): each adds its part to RelayContext where its type is declared
// (`declare module "../context.ts"`), so this file names none of the layers that name it and
// the import graph has no loop through it.
import type { ClusterNode } from "./cluster/node.ts";
import type { Config } from "./config/schema.ts";
import type { Consumers } from "./consumers/registry.ts";
import type { LiveIndex } from "./fanout/live-index.ts";
import type { Subscription } from "./fanout/subscription.ts";
import type { Expiration } from "./store/expiration.ts";
import type { Store } from "./store/types.ts";
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
  consumers: Consumers;
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
