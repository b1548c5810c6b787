// EVENT: shape, time window, expiry, id and signature, then the write policy (lists, proof of
// work, protected events, AUTH, plugin), then the writer (or straight to live subscribers for
// ephemeral kinds). The OK goes out only once the outcome is final.
import { broadcast } from "../fanout/broadcast.ts";
import { computeId, storedJson } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import { checkEventShape } from "../nostr/event.ts";
import { isEphemeral } from "../nostr/kinds.ts";
import type { Conn } from "../server/connection.ts";
import { expirationOf } from "../store/expiration.ts";
import { okFrame, okReject } from "../wire/frames.ts";
import type { Reject } from "../wire/reasons.ts";
import { ALREADY_HAVE, invalid, isReject } from "../wire/reasons.ts";
import { writePolicy } from "./access.ts";
import type { RelayContext } from "./context.ts";
import { bump } from "./context.ts";

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

const BAD_ID = () => invalid("event id does not match the sha256 of its serialization");
const BAD_SIG = () => invalid("signature verification failed");

/** Everything that can be decided about an event without the store or the connection, in-thread. */
export function admit(
  ctx: Pick<RelayContext, "config" | "verifier">,
  raw: unknown,
  now = Date.now() / 1000,
  opts: AdmitOptions = {},
): NostrEvent | Reject {
  const e = admitShape(ctx, raw, now, opts);
  if (isReject(e)) return e;
  if (computeId(e) !== e.id) return BAD_ID();
  if (opts.noVerify) return e;
  const ok = ctx.verifier.verify(
    Buffer.from(e.sig, "hex"),
    Buffer.from(e.id, "hex"),
    Buffer.from(e.pubkey, "hex"),
  );
  return ok ? e : BAD_SIG();
}

function refuse(ctx: RelayContext, conn: Conn, id: string, r: Reject): void {
  bump(ctx.counters.eventsRejected, r.prefix);
  conn.send(okReject(id, r));
}

export async function handleEvent(ctx: RelayContext, conn: Conn, raw: unknown): Promise<void> {
  const rawId = (raw as { id?: unknown }).id;
  const replyId = typeof rawId === "string" ? rawId : "";
  const e = admitShape(ctx, raw);
  if (isReject(e)) return refuse(ctx, conn, replyId, e);
  // Id and signature are checked off the main thread, batched with other connections' events.
  const verdict = await ctx.verifyPool.submit(e);
  if (verdict !== "ok") return refuse(ctx, conn, replyId, verdict === "bad-id" ? BAD_ID() : BAD_SIG());
  const denied = writePolicy(ctx, conn, e);
  if (denied) return refuse(ctx, conn, e.id, denied);
  if (ctx.plugin) {
    const v = await ctx.plugin.check(e, conn.ip, [...conn.authed][0]);
    if (v.action === "reject") {
      const msg = /^[a-z-]+: /.test(v.msg) ? v.msg : `blocked: ${v.msg || "refused by write policy"}`;
      bump(ctx.counters.eventsRejected, msg.slice(0, msg.indexOf(":")));
      conn.send(okFrame(e.id, false, msg));
      return;
    }
    if (v.action === "shadowReject") {
      conn.send(okFrame(e.id, true, ""));
      return;
    }
  }
  const json = storedJson(e);
  if (isEphemeral(e.kind)) {
    ctx.counters.eventsAccepted++;
    bump(ctx.counters.acceptedByKind, String(e.kind));
    broadcast(ctx.live, e, json);
    conn.send(okFrame(e.id, true, ""));
    return;
  }
  const outcome = await ctx.writer.submit(e, json);
  switch (outcome.status) {
    case "stored":
      ctx.counters.eventsAccepted++;
      bump(ctx.counters.acceptedByKind, String(e.kind));
      conn.send(okFrame(e.id, true, ""));
      return;
    case "duplicate":
      bump(ctx.counters.eventsRejected, "duplicate");
      conn.send(okFrame(e.id, true, ALREADY_HAVE));
      return;
    case "rejected":
      return refuse(ctx, conn, e.id, outcome.reject);
    default:
      outcome satisfies never;
  }
}
