// NIP-77 sessions: NEG-OPEN gathers the filter's (created_at, id) items under the same read rules
// as a REQ and answers the client's first message; NEG-MSG continues; NEG-CLOSE ends. Each
// session holds its items in memory (capped by negentropy.maxItems), times out when the client
// goes quiet, and a connection has at most negentropy.maxSessions of them.

import type { RelayContext } from "../context.ts";
import { collectItems } from "../indexes/neg-items.ts";
import type { Filter } from "../nostr/filter.ts";
import { PackedStorage, Responder, sortItems } from "../nostr/negentropy.ts";
import { negErrFrame, negMsgFrame } from "../wire/frames.ts";
import type { Reject } from "../wire/reasons.ts";
import { blocked, closed, isReject } from "../wire/reasons.ts";
import { readGate, readRule } from "./access.ts";
import { challengeFor } from "./auth.ts";
import type { Client, NegSession } from "./client.ts";
import { parseFilters } from "./req.ts";

export function closeNeg(conn: Client, subId: string): void {
  const s = conn.negs.get(subId);
  if (!s) return;
  s.cancelled = true;
  clearTimeout(s.timer);
  conn.negs.delete(subId);
}

export function closeAllNegs(conn: Client): void {
  for (const subId of [...conn.negs.keys()]) closeNeg(conn, subId);
}

function fail(conn: Client, subId: string, r: Reject): void {
  // An auth-required: refusal carries the NIP-42 challenge before it, as a REQ's does.
  challengeFor(conn, r);
  closeNeg(conn, subId);
  conn.send(negErrFrame(subId, r));
}

/** (Re)arms the session's idle timer. */
function touch(ctx: RelayContext, conn: Client, subId: string, s: NegSession): void {
  clearTimeout(s.timer);
  s.timer = setTimeout(() => {
    if (conn.negs.get(subId) === s) fail(conn, subId, closed("negentropy session timed out"));
  }, ctx.config["negentropy.timeoutSeconds"] * 1000);
  s.timer.unref?.();
}

/** Answers one client message; false when the session ended with a NEG-ERR. */
function answer(conn: Client, subId: string, codec: Responder, msg: string): boolean {
  let reply: string;
  try {
    reply = codec.reconcile(msg);
  } catch (e) {
    fail(conn, subId, closed(`bad negentropy message: ${(e as Error).message}`));
    return false;
  }
  conn.send(negMsgFrame(subId, reply));
  return true;
}

const HEX = /^(?:[0-9a-f]{2})+$/;

export async function handleNegOpen(
  ctx: RelayContext,
  conn: Client,
  subId: string,
  rawFilter: unknown,
  initial: string,
): Promise<void> {
  closeNeg(conn, subId); // a NEG-OPEN with a known id replaces that session
  const c = ctx.config;
  const filters = parseFilters(ctx, [rawFilter]);
  if (isReject(filters)) return fail(conn, subId, filters);
  if ((filters as Filter[]).some((f) => f.search !== undefined))
    return fail(conn, subId, blocked("search filters cannot be reconciled"));
  const refused = readGate(ctx, conn, filters);
  if (refused) return fail(conn, subId, refused);
  if (!HEX.test(initial)) return fail(conn, subId, closed("bad negentropy message: not hex"));
  const max = c["negentropy.maxSessions"];
  if (conn.negs.size >= max)
    return fail(conn, subId, blocked(`too many negentropy sessions (at most ${max} per connection)`));
  const s: NegSession = { cancelled: false, queued: [] };
  conn.negs.set(subId, s);
  touch(ctx, conn, subId, s);
  const cancelled = () => s.cancelled || conn.closed;
  let items: Awaited<ReturnType<typeof collectItems>>;
  try {
    items = await collectItems(ctx.store, filters, {
      hwm: ctx.writer.visibleSerial,
      hidden: ctx.expiration.hidden,
      allow: readRule(ctx, conn, filters),
      yieldEvery: c["query.yieldEvery"],
      cancelled,
      maxItems: c["negentropy.maxItems"],
    });
  } catch (e) {
    return fail(conn, subId, closed(`query failed: ${(e as Error).message}`));
  }
  if (items === undefined || cancelled()) return;
  if (items === "too-many")
    return fail(conn, subId, blocked(`too many events to reconcile (more than ${c["negentropy.maxItems"]})`));
  const sorted = sortItems(items.times, items.ids);
  const codec = new Responder(new PackedStorage(sorted.times, sorted.ids), c["negentropy.frameSizeLimit"]);
  s.codec = codec;
  if (!answer(conn, subId, codec, initial)) return;
  for (const msg of s.queued.splice(0)) if (!answer(conn, subId, codec, msg)) return;
}

export function handleNegMsg(ctx: RelayContext, conn: Client, subId: string, msg: string): void {
  const s = conn.negs.get(subId);
  if (!s) {
    conn.send(negErrFrame(subId, closed("no negentropy session with this id")));
    return;
  }
  if (!HEX.test(msg)) {
    fail(conn, subId, closed("bad negentropy message: not hex"));
    return;
  }
  touch(ctx, conn, subId, s);
  if (!s.codec) s.queued.push(msg);
  else answer(conn, subId, s.codec, msg);
}
