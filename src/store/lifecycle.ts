// Event lifecycle inside the write transaction: NIP-09 deletion requests, NIP-62 requests to
// vanish, and the tombstones that keep removed events from coming back. Called by the writer;
// every removal goes through removeEvent (store.ts), which takes the event's body, id and
// expiry in this transaction and logs the removal: the consumers (REQ indexes, search, counts)
// take their entries out with their next batch, and readers skip it meanwhile.
import type { NostrEvent } from "../nostr/event.ts";
import { firstTagValue } from "../nostr/event.ts";
import { isAddressable, isReplaceable } from "../nostr/kinds.ts";
import type { Reject } from "../wire/reasons.ts";
import { blocked } from "../wire/reasons.ts";
import { readWatermark } from "./consumer.ts";
import { entriesOf, INDEXES } from "./index-db.ts";
import { hexBytes, readReplaceable, readU64, replaceableKey, serialKey, tagPrefix } from "./keys.ts";
import { readPast } from "./past-watermark.ts";
import { readEvent, removeEvent } from "./store.ts";
import type { Store } from "./types.ts";

const u64 = (n: number): Buffer => serialKey(n);
const tombstoneKey = (id: string, pubkey: string): Buffer => Buffer.concat([hexBytes(id), hexBytes(pubkey)]);

/** `id 32 | pubkey 32` in the store's arena, for a lookup made at once. */
function tombstoneProbe(s: Store, id: string, pubkey: string): Buffer {
  const k = s.arena.take(64);
  k.write(id, 0, 32, "hex");
  k.write(pubkey, 32, 32, "hex");
  return k;
}

/** Refuses an incoming event that an earlier deletion or vanish request removed for good. */
export function tombstoned(s: Store, e: NostrEvent, addressKey: Buffer | undefined): Reject | undefined {
  if (s.deleted.getBinaryFast(tombstoneProbe(s, e.id, e.pubkey)) !== undefined)
    return blocked("this event was deleted by its author");
  if (e.kind === 1059)
    for (const t of e.tags)
      if (t[0] === "p" && t[1]?.length === 64 && s.deleted.get(tombstoneKey(e.id, t[1])) !== undefined)
        return blocked("this gift wrap was deleted by its recipient");
  if (addressKey) {
    const until = s.deletedAddr.get(addressKey);
    if (until !== undefined && e.created_at <= readU64(until, 0))
      return blocked("this address was deleted by its author up to a later time");
  }
  const vanished = s.vanished.getBinaryFast(s.arena.hex32(e.pubkey));
  if (vanished !== undefined && e.created_at <= readU64(vanished, 0))
    return blocked("the author asked this relay to delete everything up to a later time");
  return undefined;
}

/** Removes a stored event by serial, and the replaceable pointer if it points at it. */
export function removeBySerial(s: Store, serial: number): NostrEvent | undefined {
  const json = readEvent(s, serial);
  if (json === undefined) return undefined;
  const e = JSON.parse(json) as NostrEvent;
  removeEvent(s, e, serial, json);
  if (isReplaceable(e.kind) || isAddressable(e.kind)) {
    const key = addressOf(e);
    const cur = s.replaceable.get(key);
    if (cur !== undefined && readReplaceable(cur).serial === serial) s.replaceable.remove(key);
  }
  return e;
}

/** The replaceable key of a replaceable or addressable event (NIP-01: the first `d` tag). */
export function addressOf(e: NostrEvent): Buffer {
  return replaceableKey(e.pubkey, e.kind, isAddressable(e.kind) ? (firstTagValue(e, "d") ?? "") : "");
}

/** NIP-09: applies a stored kind 5 request. Deleting a deletion request does nothing. */
export function applyDeletion(s: Store, del: NostrEvent): void {
  for (const t of del.tags) {
    const v = t[1];
    if (t[0] === "e" && v?.length === 64 && /^[0-9a-f]{64}$/.test(v)) {
      s.deleted.put(tombstoneKey(v, del.pubkey), Buffer.alloc(0));
      const at = s.ids.get(hexBytes(v));
      if (at === undefined) continue;
      const serial = readU64(at, 0);
      const target = JSON.parse(readEvent(s, serial) ?? "null") as NostrEvent | null;
      if (!target || target.kind === 5) continue;
      const own = target.pubkey === del.pubkey;
      const recipientOfWrap =
        target.kind === 1059 && target.tags.some((x) => x[0] === "p" && x[1] === del.pubkey);
      if (own || recipientOfWrap) removeBySerial(s, serial);
    } else if (t[0] === "a" && v !== undefined) {
      const m = /^(\d+):([0-9a-f]{64}):(.*)$/s.exec(v);
      if (!m || m[2] !== del.pubkey) continue;
      const kind = Number(m[1]);
      if (!(isReplaceable(kind) || isAddressable(kind))) continue;
      const key = replaceableKey(del.pubkey, kind, isAddressable(kind) ? (m[3] ?? "") : "");
      const prev = s.deletedAddr.get(key);
      if (prev === undefined || readU64(prev, 0) < del.created_at)
        s.deletedAddr.put(key, u64(del.created_at));
      const cur = s.replaceable.get(key);
      if (cur !== undefined && readReplaceable(cur).createdAt <= del.created_at)
        removeBySerial(s, readReplaceable(cur).serial);
    }
  }
}

/** True when a kind 62 request names this relay (or ALL_RELAYS). */
export function vanishTargetsUs(e: NostrEvent, isOwnUrl: (url: string) => boolean): boolean {
  return e.tags.some(
    (t) => t[0] === "relay" && t[1] !== undefined && (t[1] === "ALL_RELAYS" || isOwnUrl(t[1])),
  );
}

/**
 * NIP-62: removes every event of the pubkey up to the request's created_at (its deletion
 * requests included) and gift wraps addressed to it, and remembers the time so older events
 * of that pubkey are not accepted again. Returns how many events were removed.
 */
export function applyVanish(s: Store, req: NostrEvent): number {
  const prev = s.vanished.get(hexBytes(req.pubkey));
  if (prev === undefined || readU64(prev, 0) < req.created_at)
    s.vanished.put(hexBytes(req.pubkey), u64(req.created_at));
  const serials = new Set<number>();
  for (const { serial } of entriesOf(s.pubkey, hexBytes(req.pubkey), 0, req.created_at)) serials.add(serial);
  const wraps = tagPrefix("p", req.pubkey);
  if (wraps) {
    for (const { serial } of entriesOf(s.tag, wraps, 0, req.created_at)) {
      const json = readEvent(s, serial);
      if (json && (JSON.parse(json) as NostrEvent).kind === 1059) serials.add(serial);
    }
  }
  collectTail(s, serials, (e) => {
    if (e.created_at > req.created_at) return false;
    const wrap = e.kind === 1059 && e.tags.some((t) => t[0] === "p" && t[1] === req.pubkey);
    return e.pubkey === req.pubkey || wrap;
  });
  let n = 0;
  for (const serial of serials) if (removeBySerial(s, serial)) n++;
  return n;
}

/**
 * Events stored after the REQ indexes' watermark (this batch's too) have no entries yet: adds
 * the serials of those `wanted` picks, read from the log itself. Removing a whole author is
 * rare and the log's tail is short.
 */
function collectTail(s: Store, into: Set<number>, wanted: (e: NostrEvent) => boolean): void {
  const through = readWatermark(s, INDEXES)?.serial ?? s.lastSerial;
  const added = (serial: number, json: string): void => {
    if (wanted(JSON.parse(json) as NostrEvent)) into.add(serial);
  };
  readPast(s, { serial: through, seq: 0 }, { added });
}

/** Removes every stored event of a pubkey (a NIP-86 ban). Returns how many were removed. */
export function removeAuthor(s: Store, pubkey: string): number {
  const serials = new Set<number>();
  for (const { serial } of entriesOf(s.pubkey, hexBytes(pubkey))) serials.add(serial);
  collectTail(s, serials, (e) => e.pubkey === pubkey);
  let n = 0;
  for (const serial of serials) if (removeBySerial(s, serial)) n++;
  return n;
}

/** Removes a stored event by id (a NIP-86 ban); false when it is not stored. */
export function removeById(s: Store, id: string): boolean {
  const at = s.ids.get(hexBytes(id));
  return at !== undefined && removeBySerial(s, readU64(at, 0)) !== undefined;
}
