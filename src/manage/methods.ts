// The NIP-86 methods: each checks its params, makes its change inside one writer task (so it is
// ordered with the events around it and on disk before the answer) and returns the result the
// NIP names. Bans remove what they name from the store at once, through the store's removal
// path (the consumers drop the index entries, search postings and counts with it); lifting a
// ban does not bring removed events back.
import * as nip19 from "nostr-tools/nip19";
import type { RelayContext } from "../context.ts";
import { removeAuthor, removeById } from "../store/lifecycle.ts";
import type { Store } from "../store/types.ts";
import type { InfoField, ListName, Moderation } from "./moderation.ts";
import { normalizeIp } from "./moderation.ts";

/** Bad params or an unknown method: answered `{"result": null, "error": message}`. */
export class MethodError extends Error {}

type Method = (ctx: RelayContext, params: readonly unknown[]) => unknown;

const HEX64 = /^[0-9a-f]{64}$/;

/** A 32-byte hex value (any case); npub/note accepted as well, since operators copy those. */
function hex32(params: readonly unknown[], what: "pubkey" | "event id", bech: "npub" | "note"): string {
  const v = params[0];
  if (typeof v !== "string") throw new MethodError(`params[0] must be the ${what} as 64 hex characters`);
  const lower = v.trim().toLowerCase();
  if (HEX64.test(lower)) return lower;
  if (lower.startsWith(`${bech}1`)) {
    try {
      const d = nip19.decode(lower as `${typeof bech}1${string}`);
      if (d.type === bech && typeof d.data === "string") return d.data;
    } catch {}
  }
  throw new MethodError(`params[0] must be the ${what} as 64 hex characters, got ${JSON.stringify(v)}`);
}

function reason(params: readonly unknown[], at = 1): string {
  const r = params[at];
  if (r === undefined || r === null) return "";
  if (typeof r !== "string") throw new MethodError(`params[${at}] (the reason) must be a string`);
  return r;
}

function kind(params: readonly unknown[]): string {
  const k = params[0];
  // A kind as a JSON number per NIP-86; a numeric string is taken too.
  const n = typeof k === "string" && /^\d+$/.test(k) ? Number(k) : k;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 65535)
    throw new MethodError(`params[0] must be a kind, an integer from 0 to 65535, got ${JSON.stringify(k)}`);
  return String(n);
}

function ip(params: readonly unknown[]): string {
  const v = params[0];
  const n = typeof v === "string" ? normalizeIp(v) : undefined;
  if (n === undefined)
    throw new MethodError(`params[0] must be an IPv4 or IPv6 address, got ${JSON.stringify(v)}`);
  return n;
}

/**
 * Runs a change in the writer's queue; resolves once it is on disk. The lists in memory are
 * changed inside the transaction; if it fails they are read back from disk.
 */
async function change<T>(ctx: RelayContext, run: (s: Store, m: Moderation) => T): Promise<T> {
  try {
    return await ctx.writer.task((s) => run(s, ctx.moderation));
  } catch (e) {
    ctx.moderation.load();
    throw e;
  }
}

const list = (m: Moderation, name: ListName, field: "pubkey" | "id" | "ip") =>
  [...m.lists[name]].map(([value, why]) => (why ? { [field]: value, reason: why } : { [field]: value }));

const kinds = (m: Moderation, name: ListName) => [...m.lists[name].keys()].map(Number).sort((a, b) => a - b);

function setInfo(field: InfoField): Method {
  return async (ctx, params) => {
    const v = params[0];
    if (typeof v !== "string") throw new MethodError(`params[0] must be the new ${field}, a string`);
    if (field === "icon" && v !== "" && !/^https?:\/\/\S+$/.test(v))
      throw new MethodError("params[0] must be an http(s) URL of the icon");
    // An empty string gives the field back to the configuration.
    await change(ctx, (_, m) => (v === "" ? m.delete("info", field) : m.put("info", field, v)));
    return true;
  };
}

export const METHODS: Record<string, Method> = {
  // NIP-86: "the names of all the other supported methods".
  supportedmethods: () => Object.keys(METHODS).filter((m) => m !== "supportedmethods"),

  banpubkey: async (ctx, p) => {
    const pk = hex32(p, "pubkey", "npub");
    const why = reason(p);
    await change(ctx, (s, m) => {
      m.delete("allowedPubkeys", pk);
      m.put("bannedPubkeys", pk, why);
      removeAuthor(s, pk);
    });
    return true;
  },
  unbanpubkey: async (ctx, p) => {
    const pk = hex32(p, "pubkey", "npub");
    await change(ctx, (_, m) => m.delete("bannedPubkeys", pk));
    return true;
  },
  listbannedpubkeys: (ctx) => list(ctx.moderation, "bannedPubkeys", "pubkey"),
  allowpubkey: async (ctx, p) => {
    const pk = hex32(p, "pubkey", "npub");
    const why = reason(p);
    await change(ctx, (_, m) => {
      m.delete("bannedPubkeys", pk);
      m.put("allowedPubkeys", pk, why);
    });
    return true;
  },
  unallowpubkey: async (ctx, p) => {
    const pk = hex32(p, "pubkey", "npub");
    await change(ctx, (_, m) => m.delete("allowedPubkeys", pk));
    return true;
  },
  listallowedpubkeys: (ctx) => list(ctx.moderation, "allowedPubkeys", "pubkey"),

  banevent: async (ctx, p) => {
    const id = hex32(p, "event id", "note");
    const why = reason(p);
    await change(ctx, (s, m) => {
      m.delete("allowedEvents", id);
      m.put("bannedEvents", id, why);
      removeById(s, id);
    });
    return true;
  },
  unbanevent: async (ctx, p) => {
    const id = hex32(p, "event id", "note");
    await change(ctx, (_, m) => m.delete("bannedEvents", id));
    return true;
  },
  listbannedevents: (ctx) => list(ctx.moderation, "bannedEvents", "id"),
  allowevent: async (ctx, p) => {
    const id = hex32(p, "event id", "note");
    const why = reason(p);
    await change(ctx, (_, m) => {
      m.delete("bannedEvents", id);
      m.put("allowedEvents", id, why);
    });
    return true;
  },
  unallowevent: async (ctx, p) => {
    const id = hex32(p, "event id", "note");
    await change(ctx, (_, m) => m.delete("allowedEvents", id));
    return true;
  },
  listallowedevents: (ctx) => list(ctx.moderation, "allowedEvents", "id"),
  // Events are accepted or refused when they arrive; none is held back for a moderator.
  listeventsneedingmoderation: () => [],

  changerelayname: setInfo("name"),
  changerelaydescription: setInfo("description"),
  changerelayicon: setInfo("icon"),

  // Each undoes the other: allowing a disallowed kind lifts the refusal, disallowing an allowed
  // kind takes it off the allow list; otherwise the kind goes on the allow (or disallow) list.
  allowkind: async (ctx, p) => {
    const k = kind(p);
    await change(ctx, (_, m) =>
      m.lists.disallowedKinds.has(k) ? m.delete("disallowedKinds", k) : m.put("allowedKinds", k, ""),
    );
    return true;
  },
  disallowkind: async (ctx, p) => {
    const k = kind(p);
    await change(ctx, (_, m) =>
      m.lists.allowedKinds.has(k) ? m.delete("allowedKinds", k) : m.put("disallowedKinds", k, ""),
    );
    return true;
  },
  listallowedkinds: (ctx) => kinds(ctx.moderation, "allowedKinds"),
  listdisallowedkinds: (ctx) => kinds(ctx.moderation, "disallowedKinds"),

  blockip: async (ctx, p) => {
    const addr = ip(p);
    const why = reason(p);
    await change(ctx, (_, m) => m.put("blockedIps", addr, why));
    // Connections already open from the address are closed too.
    for (const conn of ctx.conns)
      if (ctx.moderation.blocksIp(conn.ip)) conn.close(1008, "blocked: this address is blocked");
    return true;
  },
  unblockip: async (ctx, p) => {
    const addr = ip(p);
    await change(ctx, (_, m) => m.delete("blockedIps", addr));
    return true;
  },
  listblockedips: (ctx) => list(ctx.moderation, "blockedIps", "ip"),
};

/** Calls a method by name; throws MethodError for an unknown one or bad params. */
export async function callMethod(
  ctx: RelayContext,
  method: string,
  params: readonly unknown[],
): Promise<unknown> {
  const m = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  if (!m) throw new MethodError(`unknown method '${method}'; supportedmethods lists them`);
  return m(ctx, params);
}
