// One event inside the writer's transaction: the refusals decided in queue order, duplicates,
// tombstones, the replaceable/addressable rule (NIP-01), vanish requests (NIP-62) and deletions
// (NIP-09), then the put.
import type { NostrEvent } from "../nostr/event.ts";
import { isAddressable, isReplaceable } from "../nostr/kinds.ts";
import type { Reject } from "../wire/reasons.ts";
import { olderVersion } from "../wire/reasons.ts";
import type { WriteOutcome } from "./batch.ts";
import { readReplaceable, replaceableValue } from "./keys.ts";
import {
  addressOf,
  applyDeletion,
  applyVanish,
  removeBySerial,
  tombstoned,
  vanishTargetsUs,
} from "./lifecycle.ts";
import { putEvent } from "./store.ts";
import type { Store } from "./types.ts";

export interface ApplyRules {
  /** whether a NIP-62 `relay` tag names this relay */
  isOwnUrl?: (url: string) => boolean;
  /** refusals decided in queue order (NIP-86 bans) */
  refuse?: (e: NostrEvent) => Reject | undefined;
}

/** Stores `e` if the kind rules let it; runs inside the write transaction. */
export function applyEvent(s: Store, e: NostrEvent, json: string, rules: ApplyRules): WriteOutcome {
  const refused = rules.refuse?.(e);
  if (refused) return { status: "rejected", reject: refused };
  if (s.ids.getBinaryFast(s.arena.hex32(e.id)) !== undefined) return { status: "duplicate" };
  const addressed = isReplaceable(e.kind) || isAddressable(e.kind);
  const rkey = addressed ? addressOf(e) : undefined;
  const gone = tombstoned(s, e, rkey);
  if (gone) return { status: "rejected", reject: gone };

  const serial = s.lastSerial + 1;
  let replaced = false;
  if (rkey) {
    const cur = s.replaceable.get(rkey);
    if (cur !== undefined) {
      const old = readReplaceable(cur);
      // Newest wins; on equal created_at the lowest id wins (NIP-01).
      if (old.createdAt > e.created_at || (old.createdAt === e.created_at && old.id < e.id))
        return { status: "rejected", reject: olderVersion() };
      removeBySerial(s, old.serial);
      replaced = true;
    }
    s.replaceable.put(rkey, replaceableValue(serial, e.created_at, e.id));
  }
  // A vanish request removes what came before it, then is kept for bookkeeping.
  if (e.kind === 62 && rules.isOwnUrl && vanishTargetsUs(e, rules.isOwnUrl)) applyVanish(s, e);
  s.lastSerial = serial;
  putEvent(s, e, json, serial);
  if (e.kind === 5) applyDeletion(s, e);
  return { status: "stored", serial, replaced };
}
