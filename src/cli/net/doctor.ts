// `relay doctor`: why can't clients use this relay? Walks the layers a client goes through (DNS,
// TCP, TLS, the NIP-11 document over HTTP, the WebSocket, a REQ to EOSE) and says where it
// breaks, in words that point at the likely cause. Talks only to the relay it is given.
import { lookup } from "node:dns/promises";
import { isIP, connect as tcpConnect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { parseArgs } from "../args.ts";
import { ConnectError, explain, RelaySocket, relayUrl, timeoutMs, UsageError } from "./ws-client.ts";

export const help = `relay doctor URL [--timeout S] [--json]

Diagnoses the relay at URL (ws:// or wss://) step by step, as a client meets it:

  dns        does the host name resolve
  tcp        does the port accept connections (refused: relay down or a firewall)
  tls        for wss://, is the certificate trusted and valid for the domain
  nip11      does GET with 'Accept: application/nostr+json' on the http(s) form of the URL
             return a NIP-11 document, and what it claims (name, software, NIPs, limits)
  websocket  does the WebSocket handshake succeed
  req        the round trip time of REQ {"limit":1} to EOSE; a CLOSED answer (say, AUTH
             required), no EOSE in time, or no events at all

  --timeout S   seconds allowed for each step (default 5)
  --json        print the report as one JSON object instead of text

Exit status, as for the other commands: 0 healthy; 1 unhealthy, whether reachable but degraded
(no NIP-11 document, REQ refused, very slow) or unreachable (DNS, connection, TLS or WebSocket
failure, timeout), as the verdict line (or "verdict" in --json) says; 2 bad arguments.`;

/** A REQ round trip slower than this is reported as degraded. */
const SLOW_MS = 2000;

type Status = "ok" | "warn" | "fail" | "skip";
interface Check {
  step: string;
  status: Status;
  detail: string;
  ms?: number;
}
interface Report {
  url: string;
  verdict: "healthy" | "degraded" | "unreachable";
  exit: number;
  checks: Check[];
  nip11?: Record<string, unknown>;
  rtt_ms?: number;
}

export async function run(argv: string[]): Promise<number> {
  let url: URL;
  let wait: number;
  let json: boolean;
  try {
    const parsed = parseArgs(argv, ["json"]);
    const { timeout, json: jsonFlag, ...unknown } = parsed.flags;
    const extra = Object.keys(unknown)[0];
    if (extra !== undefined) throw new UsageError(`unknown option --${extra}`);
    if (parsed.positional.length > 1) throw new UsageError(`unexpected argument ${parsed.positional[1]}`);
    url = relayUrl(parsed.positional[0]);
    wait = timeoutMs(timeout, 5);
    json = jsonFlag !== undefined;
  } catch (e) {
    // Everything above only reads arguments: any failure is a usage error.
    console.error(`relay doctor: ${(e as Error).message}`);
    return 2;
  }
  const report = await diagnose(url, wait);
  console.log(json ? JSON.stringify(report) : text(report));
  return report.exit;
}

export async function diagnose(url: URL, wait: number): Promise<Report> {
  const report: Report = { url: url.href, verdict: "healthy", exit: 0, checks: [] };
  const add = (step: string, status: Status, detail: string, ms?: number) =>
    report.checks.push(ms === undefined ? { step, status, detail } : { step, status, detail, ms: round(ms) });
  const done = () => {
    const worst = report.checks.some((c) => c.status === "fail")
      ? 2
      : report.checks.some((c) => c.status === "warn")
        ? 1
        : 0;
    report.exit = worst === 0 ? 0 : 1;
    report.verdict = (["healthy", "degraded", "unreachable"] as const)[worst];
    return report;
  };
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = Number(url.port || (url.protocol === "wss:" ? 443 : 80));

  // dns
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
    add("dns", "ok", `${host} is an IP address, no lookup needed`);
  } else {
    const t0 = performance.now();
    try {
      const found = await deadline(lookup(host, { all: true }), wait, "ETIMEDOUT", "no DNS answer in time");
      addresses = found.map((a) => a.address);
      add("dns", "ok", `${host} resolves to ${addresses.join(", ")}`, performance.now() - t0);
    } catch (e) {
      add("dns", "fail", failure(e));
      return done();
    }
  }

  // tcp: the first address that accepts, as clients try them in order
  let address = addresses[0]!;
  let tcpError: unknown;
  for (const a of addresses) {
    const t0 = performance.now();
    try {
      await tcpOpen(a, port, wait);
      address = a;
      tcpError = undefined;
      add("tcp", "ok", `connected to ${hostPort(a, port)}`, performance.now() - t0);
      break;
    } catch (e) {
      tcpError ??= e;
    }
  }
  if (tcpError !== undefined) {
    add("tcp", "fail", `${hostPort(addresses[0]!, port)}: ${failure(tcpError)}`);
    return done();
  }

  // tls
  if (url.protocol === "wss:") {
    const t0 = performance.now();
    try {
      const cert = await tlsCheck(address, port, isIP(host) ? undefined : host, wait);
      const days = (Date.parse(cert.validTo) - Date.now()) / 86_400_000;
      const detail = `certificate for ${cert.subject}, issued by ${cert.issuer}, valid until ${cert.validTo}`;
      const ms = performance.now() - t0;
      if (days < 14) add("tls", "warn", `${detail}: expires in ${Math.floor(days)} days`, ms);
      else add("tls", "ok", detail, ms);
    } catch (e) {
      add("tls", "fail", failure(e));
      return done();
    }
  } else add("tls", "skip", "ws:// is plain text, no TLS (clients on https pages need wss://)");

  // nip11
  const http = new URL(url.href);
  http.protocol = url.protocol === "wss:" ? "https:" : "http:";
  const t11 = performance.now();
  try {
    const res = await fetch(http.href, {
      headers: { Accept: "application/nostr+json" },
      signal: AbortSignal.timeout(wait),
    });
    const body = await res.text();
    let doc: unknown;
    try {
      doc = JSON.parse(body);
    } catch {}
    const ms = performance.now() - t11;
    if (!res.ok) add("nip11", "warn", `${http.href} answers HTTP ${res.status}: no NIP-11 document`, ms);
    else if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
      const type = res.headers.get("content-type") ?? "no content type";
      add("nip11", "warn", `${http.href} answers ${type}, not a NIP-11 JSON document`, ms);
    } else {
      report.nip11 = doc as Record<string, unknown>;
      add("nip11", "ok", describe(report.nip11), ms);
    }
  } catch (e) {
    const timedOut = (e as Error).name === "TimeoutError";
    add("nip11", "warn", `${http.href}: ${timedOut ? "no HTTP answer in time" : failure(e)}`);
  }

  // websocket
  const tws = performance.now();
  let sock: RelaySocket;
  try {
    sock = await RelaySocket.open(url, wait);
    add("websocket", "ok", "handshake done", performance.now() - tws);
  } catch (e) {
    add("websocket", "fail", failure(e));
    return done();
  }

  // req
  const subId = `doctor-${crypto.randomUUID().slice(0, 8)}`;
  const treq = performance.now();
  const notes: string[] = [];
  let events = 0;
  let askedAuth = false;
  const until = Date.now() + wait;
  try {
    sock.send(["REQ", subId, { limit: 1 }]);
    for (;;) {
      const got = await sock.next(until);
      if (got.type === "timeout") {
        add("req", "warn", `no EOSE within ${wait / 1000} s: the relay is overloaded or stuck${tail(notes)}`);
        break;
      }
      if (got.type === "closed") {
        add("req", "warn", `${got.reason} before EOSE${tail(notes)}`);
        break;
      }
      if (got.type === "invalid") {
        notes.push(`a frame that is not a JSON array: ${got.text.slice(0, 80)}`);
        continue;
      }
      const [verb, sub, reason] = got.frame;
      if (verb === "AUTH") askedAuth = true;
      else if (verb === "NOTICE") notes.push(`NOTICE ${String(sub)}`);
      else if (sub !== subId) continue;
      else if (verb === "EVENT") events++;
      else if (verb === "CLOSED") {
        const auth = askedAuth ? " (the relay asks for NIP-42 AUTH)" : "";
        add("req", "warn", `REQ refused: CLOSED "${String(reason ?? "")}"${auth}${tail(notes)}`);
        break;
      } else if (verb === "EOSE") {
        const ms = performance.now() - treq;
        report.rtt_ms = round(ms);
        const what =
          events > 0
            ? `${events} event`
            : "no events: the relay is empty, or hides its events (a filter this loose matches any)";
        const slow = ms > SLOW_MS ? `; very slow (over ${SLOW_MS / 1000} s): overloaded?` : "";
        add(
          "req",
          slow ? "warn" : "ok",
          `REQ {"limit":1} to EOSE: round trip time ${fmtMs(ms)}, ${what}${slow}${tail(notes)}`,
          ms,
        );
        break;
      }
    }
  } finally {
    try {
      sock.send(["CLOSE", subId]);
    } catch {}
    sock.close();
  }
  return done();
}

function describe(doc: Record<string, unknown>): string {
  const str = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : undefined);
  const who = [
    str(doc.name) !== undefined ? `name "${str(doc.name)}"` : "no name",
    [str(doc.software), str(doc.version)].filter(Boolean).join(" ") || "software not given",
  ].join(", ");
  const nips = Array.isArray(doc.supported_nips) ? doc.supported_nips.join(", ") : "not listed";
  const lines = [`NIP-11: ${who}`, `supported NIPs: ${nips}`];
  const lim = doc.limitation;
  if (typeof lim === "object" && lim !== null) {
    const keys = [
      "auth_required",
      "payment_required",
      "restricted_writes",
      "min_pow_difficulty",
      "max_message_length",
      "max_subscriptions",
      "max_limit",
    ];
    const shown = keys
      .filter((k) => k in lim)
      .map((k) => `${k} ${JSON.stringify((lim as Record<string, unknown>)[k])}`);
    if (shown.length > 0) lines.push(`limitation: ${shown.join(", ")}`);
  }
  return lines.join("\n");
}

function text(r: Report): string {
  const lines = [`relay doctor: ${r.url}`];
  for (const c of r.checks) {
    const [first, ...more] = c.detail.split("\n");
    const ms = c.ms !== undefined && c.step !== "req" ? ` (${fmtMs(c.ms)})` : "";
    lines.push(`  ${c.status.padEnd(5)} ${c.step.padEnd(10)} ${first}${ms}`);
    for (const m of more) lines.push(`  ${"".padEnd(5)} ${"".padEnd(10)} ${m}`);
  }
  lines.push(`verdict: ${r.verdict} (exit ${r.exit})`);
  return lines.join("\n");
}

const round = (ms: number): number => Math.round(ms * 10) / 10;
const fmtMs = (ms: number): string => `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
const tail = (notes: string[]): string => (notes.length > 0 ? `\n${notes.join("\n")}` : "");
const hostPort = (a: string, port: number): string => (isIP(a) === 6 ? `[${a}]:${port}` : `${a}:${port}`);

function failure(e: unknown): string {
  if (e instanceof ConnectError) return e.message;
  const err = e as { code?: string; message?: string };
  return explain(err.code, err.message ?? String(e));
}

function deadline<T>(p: Promise<T>, ms: number, code: string, message: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new ConnectError(code, message)), ms);
    p.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

function tcpOpen(host: string, port: number, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = tcpConnect({ host, port });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new ConnectError("ETIMEDOUT", "no TCP connection in time"));
    }, ms);
    s.once("connect", () => {
      clearTimeout(timer);
      s.destroy();
      resolve();
    });
    s.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

interface CertInfo {
  subject: string;
  issuer: string;
  validTo: string;
}

function tlsCheck(host: string, port: number, servername: string | undefined, ms: number): Promise<CertInfo> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host, port, servername, ALPNProtocols: ["http/1.1"] });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new ConnectError("ETIMEDOUT", "no TLS handshake in time"));
    }, ms);
    s.once("secureConnect", () => {
      clearTimeout(timer);
      const c = s.getPeerCertificate();
      const name = (n: Record<string, unknown> | undefined) => String(n?.CN ?? n?.O ?? "unknown");
      resolve({
        subject: name(c?.subject as unknown as Record<string, unknown>),
        issuer: name(c?.issuer as unknown as Record<string, unknown>),
        validTo: c?.valid_to ?? "unknown",
      });
      s.destroy();
    });
    s.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
