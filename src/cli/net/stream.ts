// `relay stream URL`: mirrors new events live between a remote relay and the local one (by its
// URL), in either direction or both. Each side is one subscription to live events (`limit: 0`,
// no `since`: a relay sends a live subscription every matching event that arrives, whatever its
// created_at, and clients sign before they send); what one side sends is published to the other
// and remembered by id, so an event coming back (the mirror's own publication, echoed by the
// target's subscription) is never sent again. A side that drops is reconnected with backoff,
// subscribed live again, and asked once for what it stored since well before the drop.
import type { Filter } from "../../nostr/filter.ts";
import { UsageError } from "../args.ts";
import { commandArgs, filterFromFlags } from "../command-args.ts";
import { guarded } from "../output.ts";
import { secretKey } from "./nip42.ts";
import { Remote, RemoteError, wantsAuth } from "./remote.ts";
import { relayUrl } from "./ws-client.ts";

export const help = `relay stream URL [--dir down|up|both] [--local URL] [--filter JSON]
             [--nsec-file F] [--timeout S] [--quiet] [--config FILE]

Mirrors new events live between the relay at URL (the remote) and the local relay, given by
--local (default: ws://<host>:<port> of this configuration, the relay 'relay serve' runs):

  --dir down    (default) events published to the remote are published to the local relay
  --dir up      events published to the local relay are published to the remote
  --dir both    both ways; an event is never sent back to the side it came from

Every event arriving after the start is mirrored, whatever its created_at (use 'relay sync' for
what is stored). Each is published with EVENT and the answer printed on stdout, one line each:
'down|up <id> ok' or 'down|up <id> refused: <reason>'. A dropped connection is retried with
backoff (1 s doubling to 60 s); once back, the side is subscribed live again and asked for what
it stored with a created_at from ten minutes before the drop on, so nothing published meanwhile
is missed (an event signed more than ten minutes before it was sent during the drop is the one
exception); repeats are recognised by id. Events waiting for a side that is down are queued
(at most 10,000; older ones are dropped with a message).

  --filter JSON   mirror only events matching this NIP-01 filter
  --nsec-file F   answer NIP-42 AUTH on either side with this key (or RELAY_NSEC)
  --timeout S     stop after S seconds (default: run until Ctrl-C or SIGTERM)
  --quiet         no connection messages on stderr

Exit status: 0 when stopped (signal or --timeout), 2 for bad arguments.`;

/** Ids remembered against loops and repeats; the oldest are forgotten past this. */
const REMEMBER = 200_000;
/** Events queued for a side that is down. */
const QUEUE = 10_000;
const MAX_BACKOFF_MS = 60_000;
/**
 * The catch-up after a drop asks for events from this long before it: created_at is the author's
 * clock, and an event signed a while before it was sent (a NIP-07 prompt, a client's queue, a
 * rebroadcast) arrives dated before the moment it was published.
 */
const OVERLAP_S = 600;
/** Subscription ids: the live one, and the catch-up after a drop. */
const LIVE = "mirror";
const CATCH_UP = "catchup";

type Name = "remote" | "local";

/** One side: a connection kept up, a live subscription, and EVENTs to publish there. */
class Side {
  remote: Remote | undefined;
  private queue: Record<string, unknown>[] = [];
  /** events sent on the current connection awaiting their OK */
  private inflight = new Map<string, Record<string, unknown>>();
  private retried = new Set<string>();
  /** after a drop: created_at from which the next connection catches up; none at the start */
  private since: number | undefined;
  /** the catch-up page open: its `until` (undefined: the newest), events in it, and the oldest */
  private page: { until: number | undefined; got: number; fresh: number; oldest: number } | undefined;
  stopped = false;
  private wake: (() => void) | undefined;

  constructor(
    readonly name: Name,
    readonly url: URL,
    private readonly filter: Filter,
    /** whether events published here are mirrored to the other side */
    private readonly source: boolean,
    private readonly secret: Uint8Array | undefined,
    private readonly onEvent: (from: Side, e: Record<string, unknown>) => void,
    private readonly onOk: (to: Side, id: string, ok: boolean, message: string) => void,
    /** whether an event id was mirrored already */
    private readonly knows: (id: string) => boolean,
    private readonly log: (s: string) => void,
  ) {}

  /** Keeps the connection up until stopped. */
  async run(): Promise<void> {
    let backoff = 1000;
    while (!this.stopped) {
      const dropped = await this.session();
      if (this.stopped) return;
      if (dropped.connected) backoff = 1000;
      this.log(`${this.name} ${this.url.href}: ${dropped.reason}; retrying in ${backoff / 1000} s`);
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, backoff);
      });
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }

  /** One connection's life; resolves with why it ended. */
  private async session(): Promise<{ connected: boolean; reason: string }> {
    let r: Remote;
    try {
      r = await Remote.open(this.url, 10_000, this.secret);
    } catch (e) {
      return { connected: false, reason: (e as Error).message };
    }
    if (this.stopped) {
      r.close();
      return { connected: false, reason: "stopped" };
    }
    this.remote = r;
    const closed = new Promise<string>((resolve) => {
      r.onFrame((f) => {
        const body = f[0] === "EVENT" && typeof f[2] === "object" && f[2] !== null;
        if (body && f[1] === LIVE) this.onEvent(this, f[2] as Record<string, unknown>);
        else if (body && f[1] === CATCH_UP) this.caughtUp(f[2] as Record<string, unknown>);
        else if (f[0] === "EOSE" && f[1] === CATCH_UP) this.pageDone();
        else if (f[0] === "OK" && typeof f[1] === "string") {
          const e = this.inflight.get(f[1]);
          this.inflight.delete(f[1]);
          // Refused for want of AUTH: authenticate and send it once more.
          if (e && f[2] !== true && wantsAuth(f[3]) && !this.retried.has(f[1])) {
            this.retried.add(f[1]);
            void this.authThen(() => this.publish(e));
          } else {
            this.retried.delete(f[1]);
            this.onOk(this, f[1], f[2] === true, String(f[3] ?? ""));
          }
        } else if (f[0] === "CLOSED" && f[1] === LIVE) {
          if (wantsAuth(f[2])) void this.authThen(() => this.subscribe());
          else resolve(`subscription closed: ${String(f[2])}`);
        } else if (f[0] === "CLOSED" && f[1] === CATCH_UP) {
          if (wantsAuth(f[2])) void this.authThen(() => this.catchUp());
          else this.log(`${this.name}: catch-up refused: ${String(f[2])}`);
        }
      });
      // The pump rejects waiters when the socket closes; one waiter that never matches hears it.
      r.next(() => false, 2 ** 31 - 1).catch((e: Error) => resolve(e.message));
    });
    this.log(`${this.name} ${this.url.href}: connected`);
    if (this.source) {
      this.subscribe();
      this.catchUp();
    }
    // What was sent on the last connection without an answer goes again, then what waited.
    const again = [...this.inflight.values(), ...this.queue.splice(0)];
    this.inflight.clear();
    for (const e of again) this.publish(e);
    const reason = await closed;
    this.remote = undefined;
    r.close();
    // A catch-up that did not finish keeps its start: nothing after it was seen for sure.
    this.since ??= Math.floor(Date.now() / 1000) - OVERLAP_S;
    return { connected: true, reason };
  }

  /** Every matching event that arrives from now on (none stored), whatever its created_at. */
  private subscribe(): void {
    this.remote?.send(["REQ", LIVE, { ...wire(this.filter), limit: 0 }]);
  }

  /**
   * After a drop: what was stored since a while before it, newest first, a page at a time (a
   * relay answers at most its own limit per REQ): each next page ends at the oldest created_at
   * of the last one. Repeats are recognised by id.
   */
  private catchUp(until?: number): void {
    if (this.since === undefined) return;
    const { limit: _, ...f } = wire(this.filter);
    const since = Math.max(this.since, this.filter.since ?? 0);
    this.page = { until, got: 0, fresh: 0, oldest: Number.MAX_SAFE_INTEGER };
    this.remote?.send(["REQ", CATCH_UP, until === undefined ? { ...f, since } : { ...f, since, until }]);
  }

  private caughtUp(e: Record<string, unknown>): void {
    const p = this.page;
    if (p) {
      p.got++;
      if (typeof e.created_at === "number" && e.created_at < p.oldest) p.oldest = e.created_at;
      if (!this.knows(String(e.id))) p.fresh++;
    }
    this.onEvent(this, e);
  }

  /** A catch-up page ended: ask for the next one, or the catch-up is done. */
  private pageDone(): void {
    this.remote?.send(["CLOSE", CATCH_UP]);
    const p = this.page;
    this.page = undefined;
    // An empty page, one with nothing new, or one stuck on a single second ends the catch-up.
    if (!p || p.got === 0 || p.fresh === 0 || p.oldest === p.until) {
      this.since = undefined;
      return;
    }
    this.catchUp(p.oldest);
  }

  private async authThen(next: () => void): Promise<void> {
    try {
      if (await this.remote?.authenticate()) next();
    } catch (e) {
      this.log(`${this.name}: ${(e as Error).message}`);
    }
  }

  publish(e: Record<string, unknown>): void {
    if (this.remote && this.remote.closedReason === undefined) {
      this.inflight.set(String(e.id), e);
      this.remote.send(["EVENT", e]);
      return;
    }
    if (this.queue.length >= QUEUE) {
      const dropped = this.queue.shift();
      this.log(`${this.name}: queue full, dropped ${String(dropped?.id)}`);
    }
    this.queue.push(e);
  }

  stop(): void {
    this.stopped = true;
    this.remote?.close();
    this.wake?.();
  }
}

/** A parsed filter back in NIP-01 wire form (`#x` keys). */
function wire(f: Filter): Record<string, unknown> {
  const { tags, ...rest } = f as Filter & { tags?: [string, string[]][] };
  const w: Record<string, unknown> = { ...rest };
  for (const [letter, values] of tags ?? []) w[`#${letter}`] = values;
  return w;
}

export async function run(argv: string[]): Promise<number> {
  return guarded("stream", async () => {
    const { positional, flags, config } = commandArgs(argv, {
      booleans: ["quiet"],
      options: ["dir", "local", "filter", "nsec-file", "timeout"],
      positional: 1,
    });
    const remoteUrl = relayUrl(positional[0]);
    const localUrl = relayUrl(flags.local ?? `ws://${config.host}:${config.port}`);
    const dir = flags.dir ?? "down";
    if (dir !== "down" && dir !== "up" && dir !== "both")
      throw new UsageError(`--dir must be down, up or both, got '${dir}'`);
    const filter = filterFromFlags(flags);
    let stopAfter = Infinity;
    if (flags.timeout !== undefined) {
      stopAfter = Number(flags.timeout);
      if (!Number.isFinite(stopAfter) || stopAfter <= 0)
        throw new UsageError(`--timeout must be a positive number of seconds, got '${flags.timeout}'`);
    }
    const secret =
      flags["nsec-file"] !== undefined || process.env.RELAY_NSEC ? secretKey(flags["nsec-file"]) : undefined;
    const log = flags.quiet !== undefined ? () => {} : (s: string) => console.error(`relay stream: ${s}`);

    // id → the side it came from (insertion order: the oldest are forgotten first).
    const seen = new Map<string, Name>();
    const remember = (id: string, from: Name) => {
      seen.set(id, from);
      if (seen.size > REMEMBER) seen.delete(seen.keys().next().value as string);
    };
    /** ids this mirror published, by target, awaiting their OK */
    const pending = new Map<string, Name>();
    const sides: Record<Name, Side> = {} as Record<Name, Side>;
    const onEvent = (from: Side, e: Record<string, unknown>) => {
      const id = e.id;
      if (typeof id !== "string" || seen.has(id)) return; // an echo, or already mirrored
      remember(id, from.name);
      const to = sides[from.name === "remote" ? "local" : "remote"];
      pending.set(id, to.name);
      to.publish(e);
    };
    const onOk = (to: Side, id: string, ok: boolean, message: string) => {
      if (pending.get(id) !== to.name) return;
      pending.delete(id);
      const d = to.name === "local" ? "down" : "up";
      console.log(ok ? `${d} ${id} ok` : `${d} ${id} refused: ${message}`);
    };
    const down = dir !== "up";
    const up = dir !== "down";
    const knows = (id: string) => seen.has(id);
    sides.remote = new Side("remote", remoteUrl, filter, down, secret, onEvent, onOk, knows, log);
    sides.local = new Side("local", localUrl, filter, up, secret, onEvent, onOk, knows, log);
    let stop: () => void = () => {};
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    const timer = stopAfter === Infinity ? undefined : setTimeout(stop, stopAfter * 1000);
    const running = [sides.remote.run(), sides.local.run()];
    await stopped;
    clearTimeout(timer);
    sides.remote.stop();
    sides.local.stop();
    await Promise.all(running).catch((e: unknown) => {
      if (!(e instanceof RemoteError)) throw e;
    });
    return 0;
  });
}
