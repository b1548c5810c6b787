// This relay's JSON API (src/api/responses.ts declares the shapes): a profile, the counts of many
// notes, the trending notes; the fields the explorer shows. Each answers undefined when the API
// is absent or fails, and the page falls back to WebSocket queries.
import type { Profile } from "../nostr/profile.ts";
import { isEvent, type NostrEvent } from "./socket.ts";

/** A note's counts as the cards show them: reactions split into likes and others, sats zapped. */
export interface Counts {
  likes: number;
  reactions: number;
  reposts: number;
  replies: number;
  zaps: number;
  /** zapped millisatoshis / 1000, rounded down, as the API gives them */
  sats: number;
}

export interface ProfileAnswer {
  /** undefined: the answer did not say; null: no kind 0 stored */
  profile: Profile | null | undefined;
  follows?: number;
  followers?: number;
  notes?: number;
  relays: { url: string; read: boolean; write: boolean }[];
  /** undefined when the answer has no notes list */
  latest: NostrEvent[] | undefined;
  /** the counts of the latest notes */
  counts: Map<string, Counts>;
}

type Obj = Record<string, unknown>;
const obj = (x: unknown): Obj | undefined =>
  typeof x === "object" && x !== null && !Array.isArray(x) ? (x as Obj) : undefined;
const num = (...xs: unknown[]): number | undefined => xs.find((x): x is number => typeof x === "number");

function strings(x: Obj): Profile {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(x)) if (typeof v === "string") out[k] = v;
  return out as Profile;
}

/**
 * The body of a 200 answer as an object, else undefined. A cached answer is revalidated (a 304
 * costs little), so counts are never those of up to api.maxAgeSeconds ago.
 */
async function get(path: string): Promise<Obj | undefined> {
  try {
    const r = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-cache" });
    return r.status === 200 ? obj(await r.json()) : undefined;
  } catch {
    return undefined;
  }
}

/** `counts` of an API answer, as the cards show them. */
function counts(x: unknown): Counts | undefined {
  const c = obj(x);
  if (!c) return undefined;
  const n = (k: string) => (typeof c[k] === "number" ? (c[k] as number) : 0);
  return {
    likes: n("likes"),
    reactions: n("reactions"),
    reposts: n("reposts"),
    replies: n("replies"),
    zaps: n("zaps"),
    sats: n("zap_sats"),
  };
}

/** Events with their counts from a list of `{event, counts}`. */
function withCounts(list: unknown): { events: NostrEvent[]; counts: Map<string, Counts> } {
  const events: NostrEvent[] = [];
  const found = new Map<string, Counts>();
  for (const item of Array.isArray(list) ? list : []) {
    const ev = obj(item)?.event;
    if (!isEvent(ev)) continue;
    events.push(ev);
    const c = counts(obj(item)?.counts);
    if (c) found.set(ev.id, c);
  }
  return { events, counts: found };
}

/** The API takes at most api.maxLimit ids (100 by default) per request. */
const IDS_PER_REQUEST = 100;

/** GET /v0/notes/counts: the counts of these notes, one request per 100. */
export async function fetchCounts(ids: string[]): Promise<Map<string, Counts> | undefined> {
  const out = new Map<string, Counts>();
  const parts: string[][] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_REQUEST) parts.push(ids.slice(i, i + IDS_PER_REQUEST));
  const bodies = await Promise.all(parts.map((p) => get(`/v0/notes/counts?ids=${p.join(",")}`)));
  for (const body of bodies) {
    if (!body || !Array.isArray(body.notes)) return undefined;
    for (const n of body.notes) {
      const id = obj(n)?.id;
      const c = counts(obj(n)?.counts);
      if (typeof id === "string" && c) out.set(id, c);
    }
  }
  return out;
}

/** GET /v0/trending/notes: the notes in the API's order, with their counts. */
export async function fetchTrending(
  limit: number,
): Promise<{ events: NostrEvent[]; counts: Map<string, Counts> } | undefined> {
  const body = await get(`/v0/trending/notes?limit=${limit}`);
  return body && Array.isArray(body.notes) ? withCounts(body.notes) : undefined;
}

export async function fetchProfile(npub: string, limit: number): Promise<ProfileAnswer | undefined> {
  const body = await get(`/v0/p/${npub}?limit=${limit}`);
  if (!body) return undefined;
  const p = body.metadata;
  const notes = obj(body.notes);
  const answer: ProfileAnswer = {
    profile: p === undefined ? undefined : obj(p) ? strings(obj(p)!) : null,
    relays: (Array.isArray(body.relays) ? body.relays : []).flatMap((r) => {
      const o = obj(r);
      return o && typeof o.url === "string"
        ? [{ url: o.url, read: o.read !== false, write: o.write !== false }]
        : [];
    }),
    latest: Array.isArray(notes?.latest) ? withCounts(notes.latest).events : undefined,
    counts: withCounts(notes?.latest).counts,
  };
  const follows = num(obj(body.follows)?.count);
  const followers = num(body.followers);
  const count = num(notes?.count);
  if (follows !== undefined) answer.follows = follows;
  if (followers !== undefined) answer.followers = followers;
  if (count !== undefined) answer.notes = count;
  return answer;
}
