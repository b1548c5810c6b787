// Every API answer's shape, declared once as a JSON schema and serialised by fast-json-stringify
// from it (a compiled serialiser per shape: only declared fields go out, in declared order), and
// the HTTP envelope around it: ETag (a hash of the body), Cache-Control, If-None-Match → 304,
// and `{"error": "..."}` bodies with the relay's reason prefixes. HEAD and CORS are server/http.ts's.
import build from "fast-json-stringify";

const str = { type: "string" } as const;
const int = { type: "integer" } as const;
const nullableStr = { type: ["string", "null"] } as const;

const obj = (properties: Record<string, unknown>) =>
  ({ type: "object", properties, required: Object.keys(properties), additionalProperties: false }) as const;
const list = (items: unknown) => ({ type: "array", items }) as const;

export const eventSchema = obj({
  id: str,
  pubkey: str,
  created_at: int,
  kind: int,
  tags: list(list(str)),
  content: str,
  sig: str,
});

export const authorSchema = obj({
  pubkey: str,
  name: nullableStr,
  display_name: nullableStr,
  picture: nullableStr,
  nip05: nullableStr,
});

export const countsSchema = obj({
  likes: int,
  reactions: int,
  reposts: int,
  replies: int,
  zaps: int,
  zap_sats: int,
});

export const metadataSchema = obj({
  name: nullableStr,
  display_name: nullableStr,
  about: nullableStr,
  picture: nullableStr,
  banner: nullableStr,
  nip05: nullableStr,
  lud16: nullableStr,
  lud06: nullableStr,
  website: nullableStr,
});

export const searchSchema = obj({
  query: str,
  results: list(obj({ event: eventSchema, author: authorSchema, counts: countsSchema })),
});

export const trendingSchema = obj({
  window: obj({ seconds: int }),
  notes: list(
    obj({ event: eventSchema, author: authorSchema, counts: countsSchema, score: { type: "number" } }),
  ),
});

export const noteCountsSchema = obj({
  notes: list(obj({ id: str, counts: countsSchema })),
});

export const profileSchema = obj({
  pubkey: str,
  npub: str,
  metadata: metadataSchema,
  follows: obj({ count: int, pubkeys: list(str) }),
  followers: int,
  relays: list(obj({ url: str, read: { type: "boolean" }, write: { type: "boolean" } })),
  notes: obj({ count: int, latest: list(obj({ event: eventSchema, counts: countsSchema })) }),
});

export const onlineSchema = obj({
  probing: { type: "boolean" },
  window_seconds: int,
  known: int,
  probed: int,
  relays: list(obj({ url: str, last_seen: int, rtt_ms: int })),
});

export const errorSchema = obj({ error: str });

// biome-ignore lint/suspicious/noExplicitAny: fast-json-stringify's schema types are looser than ours
const compile = (schema: unknown) => build(schema as any) as (doc: unknown) => string;

export const serialize = {
  search: compile(searchSchema),
  trending: compile(trendingSchema),
  profile: compile(profileSchema),
  noteCounts: compile(noteCountsSchema),
  online: compile(onlineSchema),
  onlineUrls: compile(list(str)),
  error: compile(errorSchema),
};

const etagOf = (body: string): string => `"${Bun.hash(body).toString(36)}"`;

/** True when an If-None-Match header names this ETag (weak or strong) or is `*`. */
function matches(header: string | null, etag: string): boolean {
  if (header === null) return false;
  return header.split(",").some((t) => {
    const tag = t.trim().replace(/^W\//, "");
    return tag === "*" || tag === etag;
  });
}

/** The extra CORS header a browser needs to read the ETag (when CORS is on at all). */
/** Bodies at least this long are gzipped for clients that accept it; smaller ones gain little. */
const GZIP_MIN_BYTES = 1024;

/**
 * A 200 answer with its ETag and max-age, or 304 when the client already has this body. Long
 * bodies go gzipped to clients that accept it; each encoding is its own representation, with its
 * own ETag, and `Vary: Accept-Encoding` tells caches so.
 */
export function okReply(req: Request, body: string, maxAge: number): Response {
  const raw = Buffer.from(body);
  const gzip = raw.byteLength >= GZIP_MIN_BYTES && /\bgzip\b/.test(req.headers.get("accept-encoding") ?? "");
  const etag = gzip ? etagOf(body).replace(/"$/, '-gz"') : etagOf(body);
  const headers: Record<string, string> = {
    ETag: etag,
    "Cache-Control": `public, max-age=${maxAge}`,
    Vary: "Accept-Encoding",
  };
  if (matches(req.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  headers["Content-Type"] = "application/json; charset=utf-8";
  const sent = gzip ? Bun.gzipSync(raw) : raw;
  if (gzip) headers["Content-Encoding"] = "gzip";
  // HEAD (the body dropped by http.ts) says how long the GET body would be.
  headers["Content-Length"] = `${sent.byteLength}`;
  return new Response(sent, { status: 200, headers });
}

/** An error answer: `{"error": "<prefix>: <message>"}`, never cached. */
export function errorReply(status: number, message: string): Response {
  return new Response(serialize.error({ error: message }), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" },
  });
}
