// GET /v0/p/<npub> from this relay's JSON API (src/api/responses.ts declares the shape): the
// fields the explorer shows. undefined when the API is absent or fails, and the page falls back
// to WebSocket queries.
import { isEvent, type NostrEvent } from "./socket.ts";
import type { Profile } from "./views.ts";

export interface ProfileAnswer {
  /** undefined: the answer did not say; null: no kind 0 stored */
  profile: Profile | null | undefined;
  follows?: number;
  followers?: number;
  notes?: number;
  relays: { url: string; read: boolean; write: boolean }[];
  /** undefined when the answer has no notes list */
  latest: NostrEvent[] | undefined;
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

export async function fetchProfile(npub: string): Promise<ProfileAnswer | undefined> {
  let body: Obj | undefined;
  try {
    const r = await fetch(`/v0/p/${npub}`, { headers: { Accept: "application/json" } });
    if (r.status !== 200) return undefined;
    body = obj(await r.json());
  } catch {
    return undefined;
  }
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
    latest: Array.isArray(notes?.latest) ? notes.latest.map((x) => obj(x)?.event).filter(isEvent) : undefined,
  };
  const follows = num(obj(body.follows)?.count);
  const followers = num(body.followers);
  const count = num(notes?.count);
  if (follows !== undefined) answer.follows = follows;
  if (followers !== undefined) answer.followers = followers;
  if (count !== undefined) answer.notes = count;
  return answer;
}
