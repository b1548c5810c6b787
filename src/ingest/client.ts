// What ingest needs of a client connection, and all it may touch: server/connection.ts implements
// it. Ingest names this interface, never the server's class, so the server → ingest dependency
// stays one-way.
import type { Subscription } from "../fanout/subscription.ts";
import type { Responder } from "../nostr/negentropy.ts";

/**
 * One open NIP-77 reconciliation (negentropy.ts runs them); `codec` is unset while its items are
 * being gathered.
 */
export interface NegSession {
  codec?: Responder;
  cancelled: boolean;
  timer?: ReturnType<typeof setTimeout>;
  /** NEG-MSGs that arrived while the items were being gathered, answered in order after */
  queued: string[];
}

export interface Client {
  /** unique per process, for logs */
  readonly id: number;
  /** the resolved client address (client-ip.ts): per-IP limits, the plugin's sourceInfo, logs */
  readonly ip: string;
  /** true once the socket is gone: frames sent after are dropped */
  readonly closed: boolean;
  /** open REQ subscriptions by id */
  readonly subs: Map<string, Subscription>;
  /** open NIP-77 negentropy sessions by id */
  readonly negs: Map<string, NegSession>;
  /** NIP-42: this connection's challenge, whether it was sent, and the pubkeys that answered it */
  readonly challenge: string;
  readonly challengeSent: boolean;
  /** the challenge a silent client gets after connecting (auth.writes / auth.reads) */
  challengeTimer: Timer | undefined;
  readonly authed: Set<string>;
  /** Sends the challenge unless it was sent already. */
  askAuth(): void;
  /**
   * Queues one frame for the end of this turn; false when the socket is gone. `verb`: the
   * frame's, when the caller knows it (for /metrics, without reading the frame).
   */
  send(frame: string, verb?: string): boolean;
  /**
   * Stops reading this client's frames (TCP backpressure) until `resume`: ingest does so while
   * the EVENTs waiting for an answer are at their bound. Frames already read are still handled.
   */
  pause(): void;
  resume(): void;
  /**
   * Sends EVENT frames in order, then `last` (an EOSE) if given, pausing while the socket drains;
   * false if cut short.
   */
  sendAll(events: readonly string[], isCancelled: () => boolean, last?: string): Promise<boolean>;
}
