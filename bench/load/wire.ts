// An event as the load tool sends it and reads it back: the wire's JSON object, NIP-01's event.
export type { NostrEvent as WireEvent } from "../../src/nostr/event.ts";
