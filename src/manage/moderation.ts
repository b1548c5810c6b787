// What operators set through the NIP-86 management API (methods.ts): banned and allowed pubkeys
// and events, allowed and disallowed kinds, blocked IP addresses, and the NIP-11 name,
// description and icon. Read from memory on every EVENT and connection; every change is made
// inside a writer task, so it is ordered with the events around it, on disk before the call is
// answered, and read back from the log environment's `moderation` database at start.
import { isIP } from "node:net";
import type { NostrEvent } from "../nostr/event.ts";
import { moderationKey, readModerationKey } from "../store/keys.ts";
import { openLogDb } from "../store/store.ts";
import type { BinDb, Store } from "../store/types.ts";
import type { Reject } from "../wire/reasons.ts";
import { blocked } from "../wire/reasons.ts";

/** Each list's code, the first byte of its keys (store/keys.ts). Never renumber. */
export const LISTS = {
  bannedPubkeys: 1,
  allowedPubkeys: 2,
  bannedEvents: 3,
  allowedEvents: 4,
  allowedKinds: 5,
  disallowedKinds: 6,
  blockedIps: 7,
  /** NIP-11 fields: name, description, icon → the text that overrides the configured one */
  info: 8,
} as const;
export type ListName = keyof typeof LISTS;

export type InfoField = "name" | "description" | "icon";

/**
 * An IP address in one spelling: lower case, and IPv4-mapped IPv6 (`::ffff:1.2.3.4`, what a
 * dual-stack socket reports for IPv4 clients) as plain IPv4. Undefined when it is no address.
 */
export function normalizeIp(raw: string): string | undefined {
  let ip = raw.trim().toLowerCase();
  if (ip.startsWith("[") && ip.endsWith("]")) ip = ip.slice(1, -1);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (mapped) ip = mapped[1]!;
  return isIP(ip) === 0 ? undefined : ip;
}

export class Moderation {
  /** each list: value (canonical text) → reason (or, for `info`, the field's text) */
  readonly lists: Record<ListName, Map<string, string>>;
  private readonly db: BinDb;
  private readonly codes = new Map<number, ListName>();

  constructor(store: Store) {
    this.db = openLogDb(store, "moderation");
    const lists = {} as Record<ListName, Map<string, string>>;
    for (const [name, code] of Object.entries(LISTS) as [ListName, number][]) {
      lists[name] = new Map();
      this.codes.set(code, name);
    }
    this.lists = lists;
    this.load();
  }

  /** Reads the lists from disk (at start, and after a change whose transaction failed). */
  load(): void {
    for (const l of Object.values(this.lists)) l.clear();
    for (const { key, value } of this.db.getRange({})) {
      const { list, value: v } = readModerationKey(key as Buffer);
      const name = this.codes.get(list);
      if (name) this.lists[name].set(v, (value as Buffer).toString("utf8"));
    }
  }

  /** Sets an entry. Must run inside a writer task (its write transaction). */
  put(list: ListName, value: string, text: string): void {
    this.db.put(moderationKey(LISTS[list], value), Buffer.from(text, "utf8"));
    this.lists[list].set(value, text);
  }

  /** Clears an entry. Must run inside a writer task (its write transaction). */
  delete(list: ListName, value: string): void {
    this.db.remove(moderationKey(LISTS[list], value));
    this.lists[list].delete(value);
  }

  /**
   * Bans, which the writer also checks in queue order: an event queued behind a ban is refused
   * even if it passed the write policy before the ban was made. A banned pubkey may publish
   * nothing, not even a request to vanish (everything it had is already gone).
   */
  banned(e: NostrEvent): Reject | undefined {
    if (this.lists.bannedEvents.has(e.id)) return blocked("this event is banned from this relay");
    if (this.lists.bannedPubkeys.has(e.pubkey)) return blocked("this pubkey is banned from this relay");
    return undefined;
  }

  blocksIp(ip: string): boolean {
    if (this.lists.blockedIps.size === 0) return false;
    const n = normalizeIp(ip);
    return n !== undefined && this.lists.blockedIps.has(n);
  }

  /** The NIP-11 fields set through the API; they override the configured ones. */
  info(): Partial<Record<InfoField, string>> {
    return Object.fromEntries(this.lists.info) as Partial<Record<InfoField, string>>;
  }

  /** Whether an allow list set through the API limits who may publish or what (NIP-11). */
  get restrictsWrites(): boolean {
    return this.lists.allowedPubkeys.size > 0 || this.lists.allowedKinds.size > 0;
  }
}

declare module "../context.ts" {
  interface RelayContext {
    /** bans, allow lists, blocked addresses and NIP-11 fields set through NIP-86 (src/manage/) */
    moderation: Moderation;
  }
}
