// Checks a store against itself (`relay check`): every index entry against the events and every
// event against its index entries, in the log (ids, replaceable pointers, NIP-40 expiry,
// NIP-09/NIP-62 tombstones) and in the derived REQ indexes up to the index consumer's
// watermark, plus every consumer's watermark against the last serial. Reads the log in one
// read transaction and the derived environment in one taken after it, so it is safe beside a
// running relay; what it finds carries what a repair must do (repairStore).
import type { Transaction } from "lmdb";
import type { NostrEvent } from "../nostr/event.ts";
import { expirationOf } from "../nostr/event.ts";
import { isAddressable, isReplaceable } from "../nostr/kinds.ts";
import type { Watermark } from "./consumer.ts";
import { readWatermark } from "./consumer.ts";
import { allEntries, hasEntry, INDEXES } from "./index-db.ts";
import { indexKey, keySerial, readReplaceable, readU64, replaceableValue, serialKey } from "./keys.ts";
import { addressOf } from "./lifecycle.ts";
import { removalsAfter } from "./removals.ts";
import { currentHighWater, readHighWater } from "./serials.ts";
import { indexEntries, openLogDb } from "./store.ts";
import type { BinDb, Store } from "./types.ts";

/** What a repair does about one finding. */
export type Fix =
  | { op: "put"; env: "log" | "derived"; db: BinDb; key: Buffer; value: Buffer }
  | { op: "remove"; env: "log" | "derived"; db: BinDb; key: Buffer }
  /** a REQ index entry (`prefix | created_at | serial`, index-db.ts) */
  | { op: "putEntry" | "removeEntry"; db: BinDb; key: Buffer }
  /** takes a stored event out the way the writer does (its removal is logged for the consumers) */
  | { op: "removeEvent"; serial: number }
  /** the consumer's entries cannot be trusted: rebuild them from the log */
  | { op: "rebuild"; consumer: string };

export interface Finding {
  count: number;
  /** the first few, described */
  examples: string[];
  fixes: Fix[];
}

export interface CheckResult {
  events: number;
  lastSerial: number;
  /** the REQ indexes were checked up to this serial (their consumer's watermark) */
  indexesThrough: number;
  /** by kind of problem, e.g. `ids: entry missing` */
  problems: Map<string, Finding>;
}

const EXAMPLES = 5;
const CONSUMER_KEY = "consumer:";

export const problemCount = (r: CheckResult): number => {
  let n = 0;
  for (const f of r.problems.values()) n += f.count;
  return n;
};

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const short = (b: Uint8Array): string => {
  const h = hex(b);
  return h.length > 40 ? `${h.slice(0, 40)}…` : h;
};

/** What every step of a check reads through: both snapshots, and where findings go. */
interface Check {
  s: Store;
  /** the log's read transaction, as lmdb-js's read options */
  lt: never;
  /** the derived environment's read transaction */
  der: Transaction;
  note: (what: string, example: string, fix?: Fix) => void;
  getEvent: (serial: number) => NostrEvent | undefined;
  expiry: BinDb;
  /** the REQ indexes' watermark, and the serial they are checked up to */
  w: Watermark | undefined;
  through: number;
  /** removed in the log and not yet taken out of the indexes: their entries are still due */
  pending: Set<number>;
}

type Winner = { serial: number; createdAt: number; id: string };

export function checkStore(s: Store): CheckResult {
  const problems = new Map<string, Finding>();
  const note = (what: string, example: string, fix?: Fix): void => {
    let f = problems.get(what);
    if (!f) {
      f = { count: 0, examples: [], fixes: [] };
      problems.set(what, f);
    }
    f.count++;
    if (f.examples.length < EXAMPLES) f.examples.push(example);
    if (fix) f.fixes.push(fix);
  };
  const expiry = openLogDb(s, "expiry");
  // The log first, then the derived environment: its snapshot is the later one, so the indexes
  // cannot hold a removal the log snapshot has not seen yet (unless it was applied since).
  const log = s.env.useReadTransaction();
  const der = s.derived.useReadTransaction();
  try {
    const lt = { transaction: log } as never;
    const getEvent = (serial: number): NostrEvent | undefined => {
      const v = s.events.get(serialKey(serial), lt) as Buffer | undefined;
      if (v === undefined) return undefined;
      try {
        return JSON.parse(v.toString("utf8")) as NostrEvent;
      } catch {
        return undefined;
      }
    };
    const lastSerial = readHighWater(s, log).serial;
    const w = readWatermark(s, INDEXES, der);
    const through = Math.min(w?.serial ?? 0, lastSerial);
    const pending = new Set<number>();
    if (w) for (const r of removalsAfter(s.removals, w.removal, log)) pending.add(r.serial);
    const c: Check = { s, lt, der, note, getEvent, expiry, w, through, pending };

    const { events, winners } = checkEvents(c);
    checkIds(c);
    checkReplaceable(c, winners);
    checkExpiry(c);
    checkTombstones(c);
    checkIndexes(c);
    checkWatermarks(c);
    return { events, lastSerial, indexesThrough: through, problems };
  } finally {
    der.done();
    log.done();
  }
}

/**
 * Every event against its entries: its id, its NIP-40 expiry, the replaceable rule (the newest
 * version of each address wins), NIP-62, and its REQ index entries up to the watermark.
 */
function checkEvents(c: Check): { events: number; winners: Map<string, Winner> } {
  const { s, lt, note } = c;
  const vanished = new Map<string, number>();
  for (const { key, value } of s.vanished.getRange(lt))
    vanished.set(hex(key as Buffer), readU64(value as Buffer, 0));
  const winners = new Map<string, Winner>();
  let events = 0;
  for (const { key, value } of s.events.getRange(lt)) {
    events++;
    const serial = readU64(key as Buffer, 0);
    let e: NostrEvent;
    try {
      e = JSON.parse((value as Buffer).toString("utf8")) as NostrEvent;
    } catch {
      note("events: body is not JSON", `serial ${serial}`);
      continue;
    }
    checkId(c, e, serial);
    const exp = expirationOf(e);
    if (exp !== undefined) {
      const ek = indexKey(Buffer.alloc(0), exp, serial);
      if (c.expiry.get(ek, lt) === undefined)
        note(
          "expiry: entry missing",
          `serial ${serial} expires ${exp}`,
          put("log", c.expiry, ek, Buffer.alloc(0)),
        );
    }
    if (isReplaceable(e.kind) || isAddressable(e.kind)) keepNewest(c, winners, e, serial);
    if (vanishedBefore(vanished, e))
      note("vanished: event still stored", `serial ${serial} id ${e.id}`, { op: "removeEvent", serial });
    if (serial <= c.through && !c.pending.has(serial))
      for (const [db, k] of indexEntries(s, e, serial)) {
        if (!hasEntry(db, k, c.der) && stillStored(s, serial))
          note(`${dbName(s, db)}: entry missing`, `serial ${serial} key ${short(k)}`, {
            op: "putEntry",
            db,
            key: k,
          });
      }
    s.arena.reset();
  }
  return { events, winners };
}

/** The event's id entry: there, pointing at it (or at a copy of it stored twice). */
function checkId(c: Check, e: NostrEvent, serial: number): void {
  const { s, note } = c;
  const sk = serialKey(serial);
  const idk = Buffer.from(e.id, "hex");
  const at = s.ids.get(idk, c.lt) as Buffer | undefined;
  if (at === undefined) note("ids: entry missing", `serial ${serial} id ${e.id}`, put("log", s.ids, idk, sk));
  else if (readU64(at, 0) !== serial) {
    const other = c.getEvent(readU64(at, 0));
    if (other?.id === e.id)
      note("events: stored twice", `id ${e.id} at serials ${readU64(at, 0)} and ${serial}`, {
        op: "removeEvent",
        serial: Math.max(serial, readU64(at, 0)),
      });
    else
      note(
        "ids: points elsewhere",
        `id ${e.id} → ${readU64(at, 0)}, stored at ${serial}`,
        put("log", s.ids, idk, sk),
      );
  }
}

/** Keeps the newest version of each address in `winners`; an older one still stored is a finding. */
function keepNewest(c: Check, winners: Map<string, Winner>, e: NostrEvent, serial: number): void {
  const a = hex(addressOf(e));
  const best = winners.get(a);
  const mine = { serial, createdAt: e.created_at, id: e.id };
  if (!best) {
    winners.set(a, mine);
    return;
  }
  const newer = e.created_at > best.createdAt || (e.created_at === best.createdAt && e.id < best.id);
  const loser = newer ? best : mine;
  if (newer) winners.set(a, mine);
  c.note("replaceable: older version still stored", `serial ${loser.serial} id ${loser.id}`, {
    op: "removeEvent",
    serial: loser.serial,
  });
}

/** Every id entry against its event. */
function checkIds(c: Check): void {
  for (const { key, value } of c.s.ids.getRange(c.lt)) {
    const serial = readU64(value as Buffer, 0);
    const e = c.getEvent(serial);
    if (!e || e.id !== hex(key as Buffer))
      c.note(
        "ids: entry without its event",
        `id ${hex(key as Buffer)} → serial ${serial}`,
        del("log", c.s.ids, key as Buffer),
      );
  }
}

/** Every replaceable pointer against the newest version stored (`winners`, from checkEvents). */
function checkReplaceable(c: Check, winners: Map<string, Winner>): void {
  const { s, note } = c;
  for (const { key, value } of s.replaceable.getRange(c.lt)) {
    const win = winners.get(hex(key as Buffer));
    if (!win) {
      note(
        "replaceable: pointer without its event",
        `address ${short(key as Buffer)}`,
        del("log", s.replaceable, key as Buffer),
      );
      continue;
    }
    winners.delete(hex(key as Buffer));
    const v = readReplaceable(value as Buffer);
    if (v.serial !== win.serial || v.createdAt !== win.createdAt || v.id !== win.id)
      note(
        "replaceable: pointer to the wrong version",
        `address ${short(key as Buffer)}`,
        putWinner(s, key as Buffer, win),
      );
  }
  for (const [a, win] of winners)
    note(
      "replaceable: pointer missing",
      `serial ${win.serial} id ${win.id}`,
      putWinner(s, Buffer.from(a, "hex"), win),
    );
}

/** Every NIP-40 expiry entry against its event. */
function checkExpiry(c: Check): void {
  for (const k of c.expiry.getKeys(c.lt)) {
    const serial = keySerial(k as Buffer);
    const e = c.getEvent(serial);
    if (!e || expirationOf(e) !== readU64(k as Buffer, 0))
      c.note("expiry: entry without its event", `serial ${serial}`, del("log", c.expiry, k as Buffer));
  }
}

/** NIP-09 tombstones: an event they name must be gone. */
function checkTombstones(c: Check): void {
  const { s, lt, note } = c;
  for (const k of s.deleted.getKeys(lt)) {
    const id = hex((k as Buffer).subarray(0, 32));
    const by = hex((k as Buffer).subarray(32, 64));
    const at = s.ids.get(Buffer.from(id, "hex"), lt) as Buffer | undefined;
    if (at === undefined) continue;
    const e = c.getEvent(readU64(at, 0));
    // The author's deletion, or (NIP-59) a gift wrap's recipient's; a deletion request is kept.
    if (e && e.kind !== 5 && (e.pubkey === by || (e.kind === 1059 && recipients(e).includes(by))))
      note("deleted: event still stored", `id ${id}`, { op: "removeEvent", serial: readU64(at, 0) });
  }
  for (const { key, value } of s.deletedAddr.getRange(lt)) {
    const cur = s.replaceable.get(key as Buffer, lt) as Buffer | undefined;
    if (cur === undefined) continue;
    const v = readReplaceable(cur);
    if (v.createdAt <= readU64(value as Buffer, 0))
      note("deleted_addr: event still stored", `id ${v.id}`, { op: "removeEvent", serial: v.serial });
  }
}

/** The derived REQ indexes, entry by entry, up to the watermark (nothing may lie beyond it). */
function checkIndexes(c: Check): void {
  const { s, note } = c;
  for (const db of [s.pubkey, s.kind, s.pubkind, s.tag, s.time]) {
    for (const key of allEntries(db, c.der)) {
      const serial = keySerial(key);
      if (c.w === undefined || serial > c.w.serial) {
        note(`${dbName(s, db)}: entry beyond the watermark`, `serial ${serial} key ${short(key)}`, {
          op: "removeEntry",
          db,
          key,
        });
        continue;
      }
      if (serial > c.through || c.pending.has(serial)) continue;
      const e = c.getEvent(serial);
      const own = e !== undefined && indexEntries(s, e, serial).some(([d, x]) => d === db && x.equals(key));
      s.arena.reset();
      if (!own)
        note(`${dbName(s, db)}: entry without its event`, `serial ${serial} key ${short(key)}`, {
          op: "removeEntry",
          db,
          key,
        });
    }
  }
}

/**
 * Every consumer's watermark, against the log as it is now (the later of the two reads): one
 * beyond the highest serial ever assigned belongs to another log (a data.mdb restored under a
 * newer derived/), and would skip the events that get those serials here.
 */
function checkWatermarks(c: Check): void {
  const nowLast = currentHighWater(c.s).serial;
  for (const { name, w: cw } of watermarks(c.s, c.der))
    if (cw.version !== 0 && cw.serial > nowLast)
      c.note(
        "consumers: watermark beyond the last serial",
        `${name} at ${cw.serial}, last serial ${nowLast}`,
        {
          op: "rebuild",
          consumer: name,
        },
      );
}

const recipients = (e: NostrEvent): string[] =>
  e.tags.filter((t) => t[0] === "p" && t[1] !== undefined).map((t) => t[1]!);

/**
 * Whether a NIP-62 request removed this event (the author's, or a gift wrap to them, up to the
 * request's created_at); the kind 62 requests themselves are kept.
 */
function vanishedBefore(vanished: Map<string, number>, e: NostrEvent): boolean {
  if (vanished.size === 0 || e.kind === 62) return false;
  const until = vanished.get(e.pubkey);
  if (until !== undefined && e.created_at <= until) return true;
  if (e.kind !== 1059) return false;
  return recipients(e).some((p) => {
    const t = vanished.get(p);
    return t !== undefined && e.created_at <= t;
  });
}

/** Whether the event is still in the log now (a relay may have removed it since the snapshot). */
const stillStored = (s: Store, serial: number): boolean => s.events.get(serialKey(serial)) !== undefined;

const put = (env: "log" | "derived", db: BinDb, key: Buffer, value: Buffer): Fix => ({
  op: "put",
  env,
  db,
  key: Buffer.from(key),
  value,
});
const del = (env: "log" | "derived", db: BinDb, key: Buffer): Fix => ({
  op: "remove",
  env,
  db,
  key: Buffer.from(key),
});
const putWinner = (s: Store, key: Buffer, w: Winner): Fix =>
  put("log", s.replaceable, key, replaceableValue(w.serial, w.createdAt, w.id));

function dbName(s: Store, db: BinDb): string {
  if (db === s.pubkey) return "pubkey";
  if (db === s.kind) return "kind";
  if (db === s.pubkind) return "pubkind";
  if (db === s.tag) return "tag";
  return "time";
}

function watermarks(s: Store, txn: Transaction): { name: string; w: Watermark }[] {
  const out: { name: string; w: Watermark }[] = [];
  for (const k of s.state.getKeys({ transaction: txn } as never)) {
    const key = String((k as Buffer).toString("utf8"));
    if (!key.startsWith(CONSUMER_KEY)) continue;
    const name = key.slice(CONSUMER_KEY.length);
    const w = readWatermark(s, name, txn);
    if (w) out.push({ name, w });
  }
  return out;
}
