// NIP-42: one challenge per connection, sent when it is first needed (with an auth-required:
// answer, or first on every connection when auth.writes or auth.reads is on); a signed kind 22242 answer
// naming this relay and the challenge, dated within ten minutes, adds its pubkey to the
// connection. AUTH events are never stored or broadcast.

import type { RelayContext } from "../context.ts";
import { checkEventShape } from "../nostr/event.ts";
import { verifyEvent } from "../verify/verify.ts";
import { okFrame, okReject } from "../wire/frames.ts";
import type { Reject } from "../wire/reasons.ts";
import { failedVerification, invalid, isReject } from "../wire/reasons.ts";
import type { Client } from "./client.ts";

export const AUTH_KIND = 22242;
const WINDOW_SECONDS = 600;

/** Whether every connection is challenged (a relay that requires AUTH for writes or reads). */
const challengesAll = (ctx: RelayContext): boolean => ctx.config["auth.writes"] || ctx.config["auth.reads"];

/**
 * How long a client that says nothing after connecting waits for the challenge. Long after any
 * client has attached its message handler, short beside a user's first action: apps whose auth
 * policy signs in when challenged (NDK) are then authenticated before they publish.
 */
const SILENT_CLIENT_CHALLENGE_MS = 500;

/**
 * Where every connection is challenged, the challenge is the first frame a client gets: just
 * before the answer to its own first frame, or after a short wait if it sends none. Never with
 * the handshake: clients that attach their message handler only after `open` (rust-nostr's WASM
 * build) lose a frame that arrives with it; a client that has sent a frame is listening.
 * Relays that require nothing send no challenge until an auth-required: answer: one nobody asked
 * for makes @welshman/net hold back every EOSE until it authenticates.
 */
export function challengeOnConnect(ctx: RelayContext, conn: Client): void {
  if (challengesAll(ctx)) conn.challengeTimer = setTimeout(() => conn.askAuth(), SILENT_CLIENT_CHALLENGE_MS);
}

/** Before a client frame is handled (see challengeOnConnect). */
export function challengeOnFrame(ctx: RelayContext, conn: Client): void {
  if (!conn.challengeSent && challengesAll(ctx)) conn.askAuth();
}

/** Before an answer with this reason: an auth-required: refusal carries the challenge before it. */
export function challengeFor(conn: Client, reason: Reject): void {
  if (reason.prefix === "auth-required") conn.askAuth();
}

function checkAuth(ctx: RelayContext, conn: Client, raw: unknown, now: number) {
  const e = checkEventShape(raw, { maxTags: 100, maxTagValues: 10, maxContentLength: 1024 });
  if (isReject(e)) return e;
  if (e.kind !== AUTH_KIND) return invalid(`AUTH event must be kind ${AUTH_KIND}`);
  const v = verifyEvent(e, ctx.verifier);
  if (v !== "ok") return failedVerification(v);
  if (Math.abs(now - e.created_at) > WINDOW_SECONDS)
    return invalid("AUTH created_at is not within 10 minutes");
  const tag = (name: string) => e.tags.find((t) => t[0] === name)?.[1];
  if (!conn.challengeSent) return invalid("no challenge was sent on this connection yet");
  if (tag("challenge") !== conn.challenge) return invalid("AUTH challenge does not match this connection's");
  const relay = tag("relay");
  if (relay === undefined || !ctx.isOwnUrl(relay)) return invalid("AUTH relay tag does not name this relay");
  return e;
}

export function handleAuth(ctx: RelayContext, conn: Client, raw: unknown, now = Date.now() / 1000): void {
  const id = (raw as { id?: unknown }).id;
  const r: Reject | { pubkey: string } = checkAuth(ctx, conn, raw, now);
  if (isReject(r)) {
    conn.send(okReject(typeof id === "string" ? id : "", r));
    return;
  }
  conn.authed.add(r.pubkey);
  conn.send(okFrame(id as string, true, ""));
}
