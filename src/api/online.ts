// Which relays named in stored NIP-65 lists answer: an optional prober (online.probe, off by
// default: no outbound traffic unless the operator asks) that sends a NIP-11 GET (Accept:
// application/nostr+json) to the http(s) form of each ws(s) URL. Bounded: one probe started per
// tick of 1/online.ratePerSecond, at most online.concurrency in flight, each relay at most once
// per online.intervalSeconds, each probe cut at online.timeoutMs. Results live in memory only.
//
// Relays come from user-published events, so without online.allowPrivate a URL whose host is or
// resolves to a loopback, private, link-local or otherwise non-public address is never fetched.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { BinDb } from "../store/types.ts";

export interface ProbeOptions {
  intervalSeconds: number;
  concurrency: number;
  ratePerSecond: number;
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface ProbeResult {
  /** unix seconds of the last probe started */
  at: number;
  ok: boolean;
  /** unix seconds of the last probe that got an answer */
  lastOk?: number;
  rttMs?: number;
}

/** The http(s) URL a ws(s) relay URL answers NIP-11 on. */
export const httpForm = (wsUrl: string): string => wsUrl.replace(/^ws/, "http");

/** A host that must not be probed without online.allowPrivate (an IP literal or a local name). */
export function isPrivateAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost") || h.endsWith(".local") || h.endsWith(".internal"))
    return true;
  const kind = isIP(h);
  if (kind === 4) {
    const [a, b] = h.split(".").map(Number) as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b < 128) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b < 32) ||
      (a === 192 && b === 168) ||
      (a === 192 && b === 0) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  if (kind === 6) {
    if (h === "::" || h === "::1") return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    if (mapped) return isPrivateAddress(mapped[1]!);
    return /^(f[cd]|fe[89ab]|ff)/.test(h);
  }
  return false;
}

async function publicHost(host: string): Promise<boolean> {
  if (isPrivateAddress(host)) return false;
  if (isIP(host.replace(/^\[|\]$/g, "")) !== 0) return true;
  try {
    const addrs = await lookup(host, { all: true });
    return addrs.length > 0 && addrs.every((a) => !isPrivateAddress(a.address));
  } catch {
    return false;
  }
}

export class Prober {
  readonly results = new Map<string, ProbeResult>();
  private inFlight = new Set<string>();
  private readonly aborts = new Set<AbortController>();
  private cursor: Buffer | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  probes = 0;

  constructor(
    private readonly relays: BinDb,
    private readonly opts: ProbeOptions,
    private readonly clock: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  start(): void {
    const every = Math.max(10, Math.floor(1000 / this.opts.ratePerSecond));
    this.timer = setInterval(() => this.tick(), every);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const a of this.aborts) a.abort();
  }

  /** Whether a URL is still named by a stored relay list. */
  known(url: string): boolean {
    return this.relays.get(Buffer.from(url, "utf8")) !== undefined;
  }

  private tick(): void {
    if (this.inFlight.size >= this.opts.concurrency) return;
    const url = this.nextDue();
    if (url !== undefined) void this.probe(url);
  }

  /** The next relay due for a probe, walking the relay list in key order from where it stopped. */
  private nextDue(): string | undefined {
    const due = this.clock() - this.opts.intervalSeconds;
    let wrapped = false;
    for (let scanned = 0; scanned < 256; ) {
      let last: Buffer | undefined;
      let n = 0;
      const start = this.cursor ? Buffer.concat([this.cursor, Buffer.from([0])]) : undefined;
      for (const k of this.relays.getKeys(start ? { start, limit: 64 } : { limit: 64 })) {
        n++;
        scanned++;
        last = k as Buffer;
        const url = last.toString("utf8");
        const r = this.results.get(url);
        if (this.inFlight.has(url) || (r && r.at > due)) continue;
        this.cursor = Buffer.from(last);
        return url;
      }
      if (last) this.cursor = Buffer.from(last);
      if (n < 64) {
        if (wrapped) return undefined;
        wrapped = true;
        this.cursor = undefined;
        this.forgetUnlisted();
      }
    }
    return undefined;
  }

  private async probe(url: string): Promise<void> {
    this.inFlight.add(url);
    const prev = this.results.get(url);
    const result: ProbeResult = { at: this.clock(), ok: false, lastOk: prev?.lastOk, rttMs: prev?.rttMs };
    this.results.set(url, result);
    const abort = new AbortController();
    this.aborts.add(abort);
    const timer = setTimeout(() => abort.abort(), this.opts.timeoutMs);
    try {
      const target = new URL(httpForm(url));
      if (!this.opts.allowPrivate && !(await publicHost(target.hostname))) return;
      this.probes++;
      const started = performance.now();
      const res = await fetch(target, {
        headers: { Accept: "application/nostr+json" },
        redirect: "manual",
        signal: abort.signal,
      });
      await res.body?.cancel();
      // Any answer but a 5xx (a proxy in front of a relay that is down) counts as reachable.
      if (res.status < 500) {
        result.ok = true;
        result.lastOk = this.clock();
        result.rttMs = Math.round(performance.now() - started);
      }
    } catch {
      // unreachable: refused, timed out, TLS or DNS failure
    } finally {
      clearTimeout(timer);
      this.aborts.delete(abort);
      this.inFlight.delete(url);
    }
  }

  /** Drops results of relays no list names any more, so the map stays as large as the list. */
  private forgetUnlisted(): void {
    for (const url of this.results.keys())
      if (!this.inFlight.has(url) && !this.known(url)) this.results.delete(url);
  }

  /** Relays still listed whose last successful probe is within the window, by URL. */
  online(windowSeconds: number): { url: string; last_seen: number; rtt_ms: number }[] {
    const since = this.clock() - windowSeconds;
    const out: { url: string; last_seen: number; rtt_ms: number }[] = [];
    for (const [url, r] of this.results) {
      if (r.lastOk === undefined || r.lastOk < since) continue;
      if (!this.known(url)) continue;
      out.push({ url, last_seen: r.lastOk, rtt_ms: r.rttMs ?? 0 });
    }
    return out.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  }

  /** How many listed relays have a finished probe (reachable or not). */
  probed(): number {
    let n = 0;
    for (const [url, r] of this.results)
      if (this.known(url) && (r.lastOk !== undefined || !this.inFlight.has(url))) n++;
    return n;
  }
}
