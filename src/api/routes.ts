// The aggregator API on the relay's HTTP port: /v0/search, /v0/trending/notes, /v0/notes/counts,
// /v0/p/<npub> and /v1/online (and /v1/online/stats), answered from the relay's own store and the counters kept as events are written.
// `startApi` (start.ts) attaches the trending window and (when enabled) the relay prober at
// start-up; `handleApi` answers a request. Shapes are in responses.ts, documented in docs/api.md.
import * as nip19 from "nostr-tools/nip19";
import type { RelayContext } from "../context.ts";
import { followed, relayList } from "../engagement/engagement.ts";
import type { NoteCounts } from "../engagement/keys.ts";
import type { QueryOptions } from "../indexes/query.ts";
import { runQuery } from "../indexes/query.ts";
import { storedKind } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import { readEvent } from "../store/store.ts";
import type { Visibility } from "./profile.ts";
import { authorCache, latestReplaceable, parseMetadata, parsePubkeyRef, visibleSerial } from "./profile.ts";
import { errorReply, okReply, serialize } from "./responses.ts";

const DEFAULT_LIMIT = 20;
const MAX_QUERY_CHARS = 1000;

/** Answers GET under /v0/ and /v1/ (server/routes.ts; http.ts answers HEAD, OPTIONS and CORS). */
export function handleApi(req: Request, url: URL, ctx: RelayContext): Response | Promise<Response> {
  const c = ctx.config;
  const api = ctx.api;
  const fail = (status: number, message: string) => errorReply(status, message);
  if (!c["api.enabled"] || !api?.counters || !api.trending)
    return fail(404, "not found: the API is disabled");
  if (c["auth.reads"]) return fail(403, "restricted: this relay requires NIP-42 authentication to read");
  const path = url.pathname;
  const ok = (body: string) => okReply(req, body, c["api.maxAgeSeconds"]);
  const limit = parseLimit(url.searchParams.get("limit"), c["api.maxLimit"]);
  if (typeof limit === "string") return fail(400, limit);
  const v: Visibility = {
    hwm: ctx.writer.visibleSerial,
    hidden: ctx.expiration.hidden,
    restrictedKinds: c["auth.restrictedKinds"],
  };
  const counts = (id: string) => countsJson(api.counters!.note(id));

  if (path === "/v0/search") {
    const q = (url.searchParams.get("q") ?? "").trim();
    if (q === "") return fail(400, "invalid: missing q, the text to search for");
    if (q.length > MAX_QUERY_CHARS)
      return fail(400, `invalid: q is longer than ${MAX_QUERY_CHARS} characters`);
    const search = ctx.consumers.searcher;
    if (!search) return fail(404, "not found: search is disabled on this relay");
    return (async () => {
      const hits = await search.filter(ctx.store, { search: q }, limit, queryOptions(ctx, v, req));
      if (!hits) return fail(503, "error: the search was cancelled");
      const author = authorCache(ctx.store, v);
      const results = hits.map((h) => {
        const e = JSON.parse(h.json) as NostrEvent;
        return { event: e, author: author(e.pubkey), counts: counts(e.id) };
      });
      return ok(serialize.search({ query: q, results }));
    })();
  }

  if (path === "/v0/trending/notes") {
    const t = api.trending;
    const allowed = !v.restrictedKinds.includes(1);
    const author = authorCache(ctx.store, v);
    const notes = [];
    for (const n of t.top(limit, (n) => allowed && visibleSerial(v, n.serial))) {
      const json = readEvent(ctx.store, n.serial);
      if (json === undefined) continue;
      const e = JSON.parse(json) as NostrEvent;
      notes.push({ event: e, author: author(e.pubkey), counts: countsJson(n.counts), score: n.score });
    }
    // The window is given by its length only: its bounds move every second, and an answer that
    // changed every second would defeat the ETag.
    return ok(serialize.trending({ window: { seconds: t.seconds }, notes }));
  }

  if (path === "/v0/notes/counts") {
    // The explorer asks once per page of cards rather than once per card.
    const ids = parseIds(url.searchParams.get("ids"), c["api.maxLimit"]);
    if (typeof ids === "string") return fail(400, ids);
    return ok(serialize.noteCounts({ notes: ids.map((id) => ({ id, counts: counts(id) })) }));
  }

  const profile = /^\/v0\/p\/([^/]+)$/.exec(path);
  if (profile) {
    let raw: string;
    try {
      raw = decodeURIComponent(profile[1]!);
    } catch {
      return fail(400, "invalid: the path is not valid percent-encoding");
    }
    const ref = parsePubkeyRef(raw);
    if ("error" in ref) return fail(400, ref.error);
    const pk = ref.pubkey;
    return (async () => {
      const s = ctx.store;
      const contacts = latestReplaceable(s, v, pk, 3);
      const relays = latestReplaceable(s, v, pk, 10002);
      const follows = contacts ? followed(contacts) : [];
      const own = api.counters!.pubkey(pk);
      const latest =
        (await runQuery(s, [{ authors: [pk], kinds: [1], limit }], queryOptions(ctx, v, req))) ?? [];
      return ok(
        serialize.profile({
          pubkey: pk,
          npub: nip19.npubEncode(pk),
          metadata: parseMetadata(latestReplaceable(s, v, pk, 0)?.content),
          follows: { count: follows.length, pubkeys: follows },
          followers: own.followers,
          relays: relays ? relayList(relays) : [],
          notes: {
            count: own.notes,
            latest: latest.map((json) => {
              const e = JSON.parse(json) as NostrEvent;
              return { event: e, counts: counts(e.id) };
            }),
          },
        }),
      );
    })();
  }

  if (path === "/v1/online") {
    // What the aggregator seed specifies: the URLs of the relays online now, nothing else.
    const relays = api.prober?.online(c["online.windowSeconds"]) ?? [];
    return ok(serialize.onlineUrls(relays.map((r) => r.url)));
  }

  if (path === "/v1/online/stats") {
    const p = api.prober;
    const window = c["online.windowSeconds"];
    return ok(
      serialize.online({
        probing: p !== undefined,
        window_seconds: window,
        known: api.counters.relayCount(),
        probed: p?.probed() ?? 0,
        relays: p?.online(window) ?? [],
      }),
    );
  }

  return fail(404, "not found: no such API path (see docs/api.md)");
}

/** `limit` clamped to 1..max; absent gives the default; anything but digits is refused. */
function parseLimit(raw: string | null, max: number): number | string {
  if (raw === null || raw === "") return Math.min(DEFAULT_LIMIT, max);
  if (!/^\d{1,9}$/.test(raw)) return "invalid: limit must be a positive integer";
  return Math.max(1, Math.min(Number(raw), max));
}

/** `ids`: comma-separated note ids (64 lowercase hex), each kept once in the order given, at most `max`. */
function parseIds(raw: string | null, max: number): string[] | string {
  if (raw === null || raw.trim() === "") return "invalid: missing ids, the comma-separated note ids";
  const ids = [...new Set(raw.split(",").map((x) => x.trim()))];
  if (ids.some((id) => !/^[0-9a-f]{64}$/.test(id)))
    return "invalid: ids must be note ids of 64 lowercase hex characters, separated by commas";
  if (ids.length > max) return `invalid: at most ${max} ids in one request`;
  return ids;
}

function queryOptions(ctx: RelayContext, v: Visibility, req: Request): QueryOptions {
  const c = ctx.config;
  return {
    hwm: v.hwm,
    defaultLimit: c["limits.defaultLimit"],
    maxLimit: c["limits.maxLimit"],
    yieldEvery: c["query.yieldEvery"],
    hidden: v.hidden,
    allow:
      v.restrictedKinds.length === 0 ? undefined : (json) => !v.restrictedKinds.includes(storedKind(json)),
    restrictedKind: (k) => v.restrictedKinds.includes(k),
    cancelled: () => req.signal.aborted,
    search: ctx.consumers.searcher,
  };
}

const countsJson = (n: NoteCounts) => ({
  likes: n.likes,
  reactions: n.reactions,
  reposts: n.reposts,
  replies: n.replies,
  zaps: n.zaps,
  zap_sats: Number(n.msats / 1000n),
});
