// EVENT: shape, time window, expiry, id and signature, then the write policy (lists, proof of
// work, protected events, AUTH, plugin), then the writer (or straight to live subscribers for
// ephemeral kinds). The OK goes out only once the outcome is final. Events are taken in batches.

import type { RelayContext } from "../context.ts";
import { bump } from "../context.ts";
import { broadcast } from "../fanout/broadcast.ts";
import { storedJsonOf } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import { checkEventShape, expirationOf } from "../nostr/event.ts";
import { isEphemeral } from "../nostr/kinds.ts";
import type { ToWrite } from "../store/batch.ts";
import type { Verifiable } from "../verify/batch.ts";
import type { VerifyResult } from "../verify/verify.ts";
import { verifyEvent } from "../verify/verify.ts";
import { okFrame, okReject } from "../wire/frames.ts";
import type { Reject } from "../wire/reasons.ts";
import {
  ALREADY_HAVE,
  error,
  failedVerification,
  invalid,
  isReject,
  outsideReason,
} from "../wire/reasons.ts";
import { writePolicy } from "./access.ts";
import { AUTH_KIND, challengeFor } from "./auth.ts";
import type { Client } from "./client.ts";
import type { PendingGate } from "./pending.ts";
import { pendingBytes } from "./pending.ts";
import type { PolicyPlugin } from "./plugin.ts";

export interface AdmitOptions {
  /** skip the created_at window (imports of old data) */
  anyTime?: boolean;
  /** skip the signature check (trusted imports) */
  noVerify?: boolean;
}

/** Shape, size, time window and expiry: everything but the id and signature. */
export function admitShape(
  ctx: Pick<RelayContext, "config">,
  raw: unknown,
  now = Date.now() / 1000,
  opts: AdmitOptions = {},
): NostrEvent | Reject {
  const c = ctx.config;
  const e = checkEventShape(raw, {
    maxTags: c["limits.maxEventTags"],
    maxTagValues: c["limits.maxTagValues"],
    maxContentLength: c["limits.maxContentLength"],
  });
  if (isReject(e)) return e;
  // NIP-42: an AUTH event sent with EVENT is refused, never stored, never broadcast (it is ephemeral).
  if (e.kind === AUTH_KIND)
    return invalid(`kind ${AUTH_KIND} is sent with AUTH, not EVENT; it is never stored or relayed`);
  if (!opts.anyTime) {
    if (e.created_at > now + c["limits.createdAtFutureSeconds"])
      return invalid(`created_at is more than ${c["limits.createdAtFutureSeconds"]} seconds in the future`);
    const past = c["limits.createdAtPastSeconds"];
    if (past > 0 && e.created_at < now - past)
      return invalid(`created_at is more than ${past} seconds in the past`);
  }
  const expires = expirationOf(e);
  if (expires !== undefined && expires <= now) return invalid("this event has expired");
  return e;
}

const NOT_IN_STREAM = () =>
  error("stored on this node, but the cluster stream has not confirmed it yet; send it again");

/** Everything that can be decided about an event without the store or the connection, in-thread. */
export function admit(
  ctx: Pick<RelayContext, "config" | "verifier">,
  raw: unknown,
  now = Date.now() / 1000,
  opts: AdmitOptions = {},
): NostrEvent | Reject {
  const e = admitShape(ctx, raw, now, opts);
  if (isReject(e)) return e;
  const v = verifyEvent(e, ctx.verifier, !opts.noVerify);
  return v === "ok" ? e : failedVerification(v);
}

function refuse(ctx: RelayContext, conn: Client, id: string, r: Reject): void {
  bump(ctx.counters.eventsRejected, r.prefix);
  challengeFor(conn, r);
  conn.send(okReject(id, r));
}

/** An EVENT that passed the shape checks, with the JSON of its tags and content. */
interface Incoming extends Verifiable {
  conn: Client;
  /** what it counts in the pending gate */
  bytes: number;
}

/**
 * EVENT frames from every connection, taken in batches: the events that arrive in one turn of
 * the event loop are verified together, written together, and answered as their outcomes are
 * known. Per batch, not per event, are the promises, the verification hand-off and the writer
 * submission; the tags and content are serialised once for the commitment and the stored form.
 */
export class EventIngest {
  private batch: Incoming[] = [];
  private scheduled = false;
  /** EVENTs taken and not yet answered */
  private readonly pending: PendingGate;

  constructor(private readonly ctx: RelayContext) {
    this.pending = ctx.pending;
  }

  /** Takes one EVENT's event; its OK goes out once its outcome is final. */
  push(conn: Client, raw: unknown): void {
    const e = admitShape(this.ctx, raw);
    if (isReject(e)) {
      const rawId = (raw as { id?: unknown }).id;
      refuse(this.ctx, conn, typeof rawId === "string" ? rawId : "", e);
      return;
    }
    const tags = JSON.stringify(e.tags);
    const content = JSON.stringify(e.content);
    const bytes = pendingBytes(tags, content);
    this.batch.push({ conn, e, tags, content, bytes });
    this.pending.take(conn, bytes);
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate gathers every frame that arrives in this turn of the event loop.
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const items = this.batch;
    this.batch = [];
    void this.process(items).finally(() => {
      let bytes = 0;
      for (const it of items) bytes += it.bytes;
      this.pending.release(items.length, bytes);
    });
  };

  private async process(items: Incoming[]): Promise<void> {
    const ctx = this.ctx;
    let verdicts: VerifyResult[];
    try {
      // Ids and signatures are checked off the main thread, with other turns' events.
      verdicts = await ctx.verifyPool.verify(items);
    } catch (err) {
      const r = error(`could not verify event: ${(err as Error).message}`);
      for (const it of items) refuse(ctx, it.conn, it.e.id, r);
      return;
    }
    let passed: Incoming[] = [];
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      const verdict = verdicts[i]!;
      if (verdict !== "ok") {
        refuse(ctx, it.conn, it.e.id, failedVerification(verdict));
        continue;
      }
      const denied = writePolicy(ctx, it.conn, it.e);
      if (denied) refuse(ctx, it.conn, it.e.id, denied);
      else passed.push(it);
    }
    if (ctx.plugin) passed = await this.sift(ctx.plugin, passed);
    const writes: ToWrite[] = [];
    const writers: Incoming[] = [];
    for (const it of passed) {
      const json = storedJsonOf(it.e, it.tags, it.content);
      if (isEphemeral(it.e.kind)) {
        ctx.counters.eventsAccepted++;
        bump(ctx.counters.acceptedByKind, String(it.e.kind));
        broadcast(ctx.live, it.e, json);
        ctx.cluster?.ephemeral(json);
        it.conn.send(okFrame(it.e.id, true, ""));
        continue;
      }
      writes.push({ event: it.e, json });
      writers.push(it);
    }
    const outcomes = await ctx.writer.submitMany(writes);
    for (let i = 0; i < outcomes.length; i++) {
      const { conn, e } = writers[i]!;
      const outcome = outcomes[i]!;
      switch (outcome.status) {
        case "stored":
          ctx.counters.eventsAccepted++;
          bump(ctx.counters.acceptedByKind, String(e.kind));
          this.ok(conn, e.id, "", outcome.serial);
          break;
        case "duplicate":
          bump(ctx.counters.eventsRejected, "duplicate");
          this.ok(conn, e.id, ALREADY_HAVE, undefined);
          break;
        case "rejected":
          refuse(ctx, conn, e.id, outcome.reject);
          break;
        default:
          outcome satisfies never;
      }
    }
  }

  /** `OK true`, once the cluster stream holds the event too when cluster.okAfter = "stream". */
  private ok(conn: Client, id: string, msg: string, serial: number | undefined): void {
    const cluster = this.ctx.cluster;
    if (!cluster?.okAfterStream) return void conn.send(okFrame(id, true, msg));
    void cluster.inStream(id, serial).then((inStream) => {
      if (inStream) conn.send(okFrame(id, true, msg));
      else refuse(this.ctx, conn, id, NOT_IN_STREAM());
    });
  }

  /** The strfry-protocol plugin's verdicts; refused and shadow-refused events are answered here. */
  private async sift(plugin: PolicyPlugin, items: Incoming[]): Promise<Incoming[]> {
    const ctx = this.ctx;
    const verdicts = await Promise.all(
      items.map((it) => plugin.check(it.e, it.conn.ip, [...it.conn.authed][0])),
    );
    const kept: Incoming[] = [];
    items.forEach((it, i) => {
      const v = verdicts[i]!;
      if (v.action === "reject") {
        refuse(ctx, it.conn, it.e.id, outsideReason(v.msg, "blocked", "refused by write policy"));
      } else if (v.action === "shadowReject") it.conn.send(okFrame(it.e.id, true, ""));
      else kept.push(it);
    });
    return kept;
  }
}
