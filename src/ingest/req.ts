// REQ, COUNT and CLOSE: filters are checked at one gate, stored results are sent newest first,
// then EOSE, then whatever arrived live meanwhile; the subscription stays until CLOSE or replace.

import type { RelayContext } from "../context.ts";
import { bump } from "../context.ts";
import { countAnswer } from "../count/answer.ts";
import { Subscription } from "../fanout/subscription.ts";
import { indexSnapshot } from "../indexes/indexes.ts";
import type { QueryOptions } from "../indexes/query.ts";
import { answerFromParts, runQuery } from "../indexes/query.ts";
import { log } from "../log.ts";
import type { Filter } from "../nostr/filter.ts";
import { parseFilter } from "../nostr/filter.ts";
import type { ReaderPool } from "../readers/pool.ts";
import { currentHighWater } from "../store/serials.ts";
import { closedFrame, countFrame, eoseFrame } from "../wire/frames.ts";
import type { Reject } from "../wire/reasons.ts";
import { error, isReject, rateLimited, unsupported } from "../wire/reasons.ts";
import { mayRead, readGate, readRule, restrictedFor } from "./access.ts";
import { challengeFor } from "./auth.ts";
import type { Client } from "./client.ts";

export function parseFilters(ctx: RelayContext, raws: unknown[]): Filter[] | Reject {
  const out: Filter[] = [];
  for (const raw of raws) {
    const f = parseFilter(raw, { maxFilterValues: ctx.config["limits.maxFilterValues"] });
    if (isReject(f)) return f;
    if (f.search !== undefined && !ctx.config["search.enabled"])
      return unsupported("search (NIP-50) is disabled on this relay");
    out.push(f);
  }
  return out;
}

function queryOptions(
  ctx: RelayContext,
  conn: Client,
  filters: readonly Filter[],
  hwm: number,
  cancelled: () => boolean,
): QueryOptions {
  const c = ctx.config;
  return {
    hidden: ctx.expiration.hidden,
    anyHidden: ctx.expiration.anyHidden,
    allow: readRule(ctx, conn, filters),
    restrictedKind: (kind) => c["auth.restrictedKinds"].includes(kind),
    restrictedKinds: c["auth.restrictedKinds"],
    hwm,
    defaultLimit: c["limits.defaultLimit"],
    maxLimit: c["limits.maxLimit"],
    yieldEvery: c["query.yieldEvery"],
    cancelled,
    onPlan: (index) => bump(ctx.counters.queriesByIndex, index),
    search: ctx.consumers.searcher,
  };
}

/**
 * While another relay writes this directory too (a handover), an answer includes every event
 * OK'd there before it. A relay that applies the consumers reads those through its writer
 * first (one turn of it: undefined when there is nothing to read); one that has handed them
 * over reads the log past the watermarks anyway (consumers/log-tail.ts), so `answerEnd` is
 * the log's end for it, and nothing is waited for.
 */
function othersFirst(ctx: RelayContext): Promise<void> | undefined {
  return ctx.peer !== undefined && !ctx.consumers.runner.released ? ctx.writer.othersAhead() : undefined;
}

/**
 * Waits until what other processes committed is read (othersFirst), holding the subscription's
 * place meanwhile, so that a CLOSE sent meanwhile closes it; false if it was closed or replaced.
 */
async function othersRead(
  ctx: RelayContext,
  conn: Client,
  subId: string,
  filters: Filter[],
): Promise<boolean> {
  const behind = othersFirst(ctx);
  if (!behind) return true;
  const waiting = new Subscription(conn, subId, filters, 0);
  conn.subs.set(subId, waiting);
  await behind;
  return !waiting.cancelled && conn.subs.get(subId) === waiting;
}

/** The serial up to which an answer holds stored events; live ones follow it. */
function answerEnd(ctx: RelayContext): number {
  const visible = ctx.writer.visibleSerial;
  return ctx.peer !== undefined && ctx.consumers.runner.released
    ? Math.max(visible, currentHighWater(ctx.store).serial)
    : visible;
}

/**
 * A REQ's stored answer with its index walks and body reads on a reader thread (readers/): this
 * thread's snapshot of the REQ indexes is taken first, the thread scans up to its watermark, and
 * this thread adds the events after it (its snapshot's tail) and cuts at each limit.
 */
async function fromReaders(
  ctx: RelayContext,
  readers: ReaderPool,
  conn: Client,
  filters: Filter[],
  o: QueryOptions,
  prefix: string,
): Promise<string[] | undefined> {
  const snap = indexSnapshot(ctx.store);
  const kinds = restrictedFor(ctx, filters);
  const parts = await readers.parts(
    {
      filters,
      hwm: o.hwm,
      through: snap.through,
      defaultLimit: o.defaultLimit,
      maxLimit: o.maxLimit,
      yieldEvery: o.yieldEvery,
      prefix,
      ...(kinds ? { restricted: { kinds, authed: [...conn.authed] } } : {}),
      expired: ctx.expiration.anyHidden(),
    },
    o.cancelled ?? (() => false),
  );
  if (!parts || o.cancelled?.()) return undefined;
  for (const p of parts) o.onPlan?.(p.index);
  return answerFromParts(ctx.store, filters, parts, o, snap);
}

export function closeSubscription(ctx: RelayContext, conn: Client, subId: string): void {
  const sub = conn.subs.get(subId);
  if (!sub) return;
  sub.cancelled = true;
  ctx.live.remove(sub);
  conn.subs.delete(subId);
}

export async function handleReq(
  ctx: RelayContext,
  conn: Client,
  subId: string,
  raws: unknown[],
): Promise<void> {
  const filters = parseFilters(ctx, raws);
  closeSubscription(ctx, conn, subId); // a REQ with a known id replaces that subscription
  if (isReject(filters)) {
    conn.send(closedFrame(subId, filters));
    return;
  }
  const refused = readGate(ctx, conn, filters);
  if (refused) {
    challengeFor(conn, refused);
    conn.send(closedFrame(subId, refused));
    return;
  }
  const max = ctx.config["limits.maxSubscriptions"];
  if (conn.subs.size >= max) {
    conn.send(closedFrame(subId, rateLimited(`too many open subscriptions (at most ${max})`)));
    return;
  }
  if (!(await othersRead(ctx, conn, subId, filters))) return;
  const sub = new Subscription(conn, subId, filters, answerEnd(ctx), (e) => mayRead(ctx, conn, e));
  conn.subs.set(subId, sub);
  ctx.live.add(sub);
  const cancelled = () => sub.cancelled || conn.closed;
  const readers = ctx.readers && !filters.some((f) => f.search !== undefined) ? ctx.readers : undefined;
  // Live events that arrive while the read waits for its turn go to sub.pending, after EOSE.
  // A read that a reader thread makes takes nothing of this thread's turns but its merge.
  const turn = readers ? undefined : ctx.reads.admit();
  if (turn) {
    await turn;
    if (cancelled()) return;
  }
  let stored: string[] | undefined;
  const started = performance.now();
  const opts = queryOptions(ctx, conn, filters, sub.hwm, cancelled);
  // The answers come back as whole EVENT frames, built from the stored bytes.
  opts.frame = { text: sub.prefix, bytes: Buffer.from(sub.prefix) };
  let firstIndex = "";
  const onPlan = opts.onPlan;
  opts.onPlan = (index) => {
    firstIndex ||= index;
    onPlan?.(index);
  };
  try {
    stored = readers
      ? await fromReaders(ctx, readers, conn, filters, opts, sub.prefix)
      : await runQuery(ctx.store, filters, opts);
    bump(ctx.counters.querySeconds, firstIndex || "none", (performance.now() - started) / 1000);
  } catch (e) {
    log.error("query failed", { conn: conn.id, ip: conn.ip, sub: subId, error: e });
    closeSubscription(ctx, conn, subId);
    conn.send(closedFrame(subId, error(`query failed: ${(e as Error).message}`)));
    return;
  }
  if (!stored || cancelled()) return;
  if (!(await conn.sendAll(stored, cancelled, eoseFrame(subId)))) return;
  // Live matches that arrived meanwhile follow EOSE in arrival order, before any newer ones.
  while (sub.pending && sub.pending.length > 0) {
    const batch = sub.pending;
    sub.pending = [];
    if (!(await conn.sendAll(batch, cancelled))) return;
  }
  sub.pending = null;
}

export async function handleCount(
  ctx: RelayContext,
  conn: Client,
  subId: string,
  raws: unknown[],
): Promise<void> {
  const filters = parseFilters(ctx, raws);
  const refused = isReject(filters) ? filters : readGate(ctx, conn, filters);
  if (refused) {
    challengeFor(conn, refused);
    conn.send(closedFrame(subId, refused));
    return;
  }
  await othersFirst(ctx);
  await ctx.reads.admit();
  if (conn.closed) return;
  try {
    const n = await countAnswer(
      ctx.store,
      filters as Filter[],
      queryOptions(ctx, conn, filters as Filter[], answerEnd(ctx), () => conn.closed),
      ctx.consumers.registers,
    );
    if (n !== undefined) conn.send(countFrame(subId, n.count, false, n.hll));
  } catch (e) {
    log.error("count failed", { conn: conn.id, ip: conn.ip, sub: subId, error: e });
    conn.send(closedFrame(subId, error(`count failed: ${(e as Error).message}`)));
  }
}
