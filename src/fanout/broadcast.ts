// Sends committed (or ephemeral) events to every live subscription that wants them.
import type { NostrEvent } from "../nostr/event.ts";
import type { LiveIndex } from "./live-index.ts";
import type { Subscription } from "./subscription.ts";

export function broadcast(
  live: LiveIndex<Subscription>,
  event: NostrEvent,
  json: string,
  serial?: number,
): number {
  let n = 0;
  live.match(event, (sub) => {
    sub.deliver(event, json, serial);
    n++;
  });
  return n;
}
