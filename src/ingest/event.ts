// EVENT: shape, time window, id and signature, then the writer (or straight to live
// subscribers for ephemeral kinds). The OK goes out only once the outcome is final.
import { broadcast } from "../fanout/broadcast.ts";
import { computeId, storedJson } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import { checkEventShape } from "../nostr/event.ts";
import { isEphemeral } from "../nostr/kinds.ts";
import type { Conn } from "../server/connection.ts";
import { okFrame, okReject } from "../wire/frames.ts";
import type { Reject } from "../wire/reasons.ts";
import { ALREADY_HAVE, invalid, isReject } from "../wire/reasons.ts";
import type { RelayContext } from "./context.ts";
import { bump } from "./context.ts";

/** Everything that can be decided about an event without the store. */
export function admit(ctx: RelayContext, raw: unknown, now = Date.now() / 1000): NostrEvent | Reject {
  const c = ctx.config;
  const e = checkEventShape(raw, {
    maxTags: c["limits.maxEventTags"],
    maxTagValues: c["limits.maxTagValues"],
    maxContentLength: c["limits.maxContentLength"],
  });
  if (isReject(e)) return e;
  if (e.created_at > now + c["limits.createdAtFutureSeconds"])
    return invalid(`created_at is more than ${c["limits.createdAtFutureSeconds"]} seconds in the future`);
  const past = c["limits.createdAtPastSeconds"];
  if (past > 0 && e.created_at < now - past)
    return invalid(`created_at is more than ${past} seconds in the past`);
  if (computeId(e) !== e.id) return invalid("event id does not match the sha256 of its serialization");
  const ok = ctx.verifier.verify(
    Buffer.from(e.sig, "hex"),
    Buffer.from(e.id, "hex"),
    Buffer.from(e.pubkey, "hex"),
  );
  if (!ok) return invalid("signature verification failed");
  return e;
}

export async function handleEvent(ctx: RelayContext, conn: Conn, raw: unknown): Promise<void> {
  const rawId = (raw as { id?: unknown }).id;
  const replyId = typeof rawId === "string" ? rawId : "";
  const e = admit(ctx, raw);
  if (isReject(e)) {
    bump(ctx.counters.eventsRejected, e.prefix);
    conn.send(okReject(replyId, e));
    return;
  }
  const json = storedJson(e);
  if (isEphemeral(e.kind)) {
    ctx.counters.eventsAccepted++;
    broadcast(ctx.live, e, json);
    conn.send(okFrame(e.id, true, ""));
    return;
  }
  const outcome = await ctx.writer.submit(e, json);
  switch (outcome.status) {
    case "stored":
      ctx.counters.eventsAccepted++;
      conn.send(okFrame(e.id, true, ""));
      return;
    case "duplicate":
      bump(ctx.counters.eventsRejected, "duplicate");
      conn.send(okFrame(e.id, true, ALREADY_HAVE));
      return;
    case "rejected":
      bump(ctx.counters.eventsRejected, outcome.reject.prefix);
      conn.send(okReject(e.id, outcome.reject));
      return;
    default:
      outcome satisfies never;
  }
}
