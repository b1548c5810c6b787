// Who may write and who may read what: the built-in write policy (allow/deny lists, proof of
// work, NIP-70 protected events, AUTH for writes) and the read rules (AUTH for reads, kinds
// restricted to their author or p-tagged recipients). Decided here, answered by the handlers.

import type { RelayContext } from "../context.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import { readable, readableJson } from "../readers/access.ts";
import type { Reject } from "../wire/reasons.ts";
import { authRequired, blocked, pow, restricted } from "../wire/reasons.ts";
import type { Client } from "./client.ts";

/** NIP-13 difficulty: leading zero bits of the id. */
export function difficulty(id: string): number {
  let bits = 0;
  for (let i = 0; i < id.length; i++) {
    const nibble = Number.parseInt(id[i]!, 16);
    if (nibble === 0) {
      bits += 4;
      continue;
    }
    return bits + Math.clz32(nibble) - 28;
  }
  return bits;
}

export function writePolicy(ctx: RelayContext, conn: Client | undefined, e: NostrEvent): Reject | undefined {
  const c = ctx.config;
  const m = ctx.moderation.lists;
  const banned = ctx.moderation.banned(e);
  if (banned) return banned;
  // A request to vanish must be honoured whoever sends it (NIP-62), so lists do not apply to it.
  // The configured lists and those set through NIP-86 add up: an allow list is the union of
  // both (limiting only when one is not empty); an event allowed through NIP-86 passes the
  // allow lists, not the deny lists.
  if (e.kind !== 62) {
    if (c["policy.pubkeyDeny"].includes(e.pubkey)) return blocked("this pubkey may not publish here");
    const exempt = m.allowedEvents.has(e.id);
    const allowPk = c["policy.pubkeyAllow"];
    if (
      !exempt &&
      (allowPk.length > 0 || m.allowedPubkeys.size > 0) &&
      !allowPk.includes(e.pubkey) &&
      !m.allowedPubkeys.has(e.pubkey)
    )
      return restricted("this pubkey is not allowed to publish here");
    const kind = String(e.kind);
    if (c["policy.kindDeny"].includes(e.kind) || m.disallowedKinds.has(kind))
      return blocked(`kind ${e.kind} is not accepted here`);
    const allowKinds = c["policy.kindAllow"];
    if (
      !exempt &&
      (allowKinds.length > 0 || m.allowedKinds.size > 0) &&
      !allowKinds.includes(e.kind) &&
      !m.allowedKinds.has(kind)
    )
      return blocked(`kind ${e.kind} is not accepted here`);
  }
  const min = c["pow.minDifficulty"];
  if (min > 0) {
    const d = difficulty(e.id);
    if (d < min) return pow(`difficulty ${d} is less than ${min}`);
  }
  if (!conn) return undefined;
  if (e.tags.some((t) => t.length === 1 && t[0] === "-") && !conn.authed.has(e.pubkey))
    return authRequired("this event may only be published by its author");
  if (c["auth.writes"] && conn.authed.size === 0 && e.kind !== 62)
    return authRequired("this relay only accepts events from authenticated users");
  return undefined;
}

/** May this reader see this event? Restricted kinds go only to their author or p-tagged recipients. */
export function mayRead(ctx: RelayContext, conn: Client, e: NostrEvent): boolean {
  return readable(ctx.config["auth.restrictedKinds"], conn.authed, e);
}

/**
 * The same rule on stored JSON, parsing only events of restricted kinds; undefined when no
 * filter can match a restricted kind (then nothing needs checking, and COUNT need not load
 * event bodies at all).
 */
export function readRule(
  ctx: RelayContext,
  conn: Client,
  filters: readonly Filter[],
): ((json: string) => boolean) | undefined {
  const kinds = restrictedFor(ctx, filters);
  return kinds && readableJson(kinds, conn.authed);
}

/** The restricted kinds a REQ's filters may meet, if any (then the read rule applies). */
export function restrictedFor(ctx: RelayContext, filters: readonly Filter[]): number[] | undefined {
  const kinds = ctx.config["auth.restrictedKinds"];
  if (kinds.length === 0) return undefined;
  if (filters.every((f) => f.kinds !== undefined && !f.kinds.some((k) => kinds.includes(k))))
    return undefined;
  return kinds;
}

/** A REQ or COUNT the reader must authenticate for first (so clients re-AUTH by themselves). */
export function readGate(ctx: RelayContext, conn: Client, filters: readonly Filter[]): Reject | undefined {
  if (ctx.config["auth.reads"] && conn.authed.size === 0)
    return authRequired("this relay only serves authenticated users");
  const kinds = ctx.config["auth.restrictedKinds"];
  const onlyRestricted = filters.every(
    (f) => f.kinds !== undefined && f.kinds.length > 0 && f.kinds.every((k) => kinds.includes(k)),
  );
  if (onlyRestricted && conn.authed.size === 0)
    return authRequired("these kinds are only served to their author or recipients");
  return undefined;
}
