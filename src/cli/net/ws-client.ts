// The client side shared by `relay req`, `publish` and `doctor`: a WebSocket to any relay, read one
// frame at a time against a deadline, and plain-words explanations of why a connection failed.

/** Bad input from the user: the command prints it as one line on stderr and exits with its usage code. */
import { UsageError } from "../args.ts";

export { UsageError };

/** A failed connection, with the system or TLS error code when the runtime gives one. */
export class ConnectError extends Error {
  constructor(
    readonly code: string | undefined,
    detail: string,
  ) {
    super(explain(code, detail));
  }
}

export type Incoming =
  | { type: "frame"; frame: unknown[] }
  | { type: "invalid"; text: string }
  | { type: "closed"; reason: string }
  | { type: "timeout" };

const DNS = "DNS failure: the host name does not resolve (typo, or the DNS record is missing)";
const SELF_SIGNED = "TLS error: self-signed certificate, not trusted";
const CHAIN = "TLS error: unknown issuer or incomplete certificate chain (serve the full chain)";
const UNREACHABLE = "unreachable: no route to the host (network down or firewall)";
/** System and TLS error codes in words an operator can act on. */
const WHY: Record<string, string> = {
  ECONNREFUSED: "connection refused: relay down or firewall blocks the port",
  ENOTFOUND: DNS,
  EAI_NONAME: DNS,
  EAI_NODATA: DNS,
  EAI_AGAIN: "DNS failure: the resolver did not answer (try again, or check the resolver)",
  ETIMEDOUT: "timeout: the relay is overloaded or unreachable (or a firewall drops the packets)",
  EHOSTUNREACH: UNREACHABLE,
  ENETUNREACH: UNREACHABLE,
  ECONNRESET: "connection reset by the relay or a proxy in front of it",
  CERT_HAS_EXPIRED: "TLS error: the certificate has expired",
  CERT_NOT_YET_VALID: "TLS error: the certificate is not valid yet (check the clocks)",
  DEPTH_ZERO_SELF_SIGNED_CERT: SELF_SIGNED,
  SELF_SIGNED_CERT_IN_CHAIN: SELF_SIGNED,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: CHAIN,
  UNABLE_TO_GET_ISSUER_CERT: CHAIN,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: CHAIN,
};

/** Why a connection failed; `detail` is the runtime's own message, kept where it adds something. */
export function explain(code: string | undefined, detail: string): string {
  if (code !== undefined && Object.hasOwn(WHY, code)) return WHY[code]!;
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID")
    return `TLS error: certificate not valid for this domain (${detail})`;
  if (code === "EPROTO") return `TLS error: handshake failed, is this port serving TLS? (${detail})`;
  if (code && /^(ERR_TLS|ERR_SSL|CERT_)/.test(code)) return `TLS error: ${detail} (${code})`;
  return code ? `${detail} (${code})` : detail;
}

/** ws:// or wss:// URL from an argument; http(s):// is taken as its WebSocket twin. */
export function relayUrl(value: string | undefined): URL {
  if (value === undefined) throw new UsageError("a relay URL (ws:// or wss://) is needed");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`'${value}' is not a URL; expected ws://host[:port] or wss://host[:port]`);
  }
  if (url.protocol === "http:" || url.protocol === "https:")
    url.protocol = url.protocol.replace("http", "ws");
  if (url.protocol !== "ws:" && url.protocol !== "wss:") {
    throw new UsageError(`relay URL must start with ws:// or wss://, got '${value}'`);
  }
  return url;
}

/** --timeout in seconds (fractions allowed) as milliseconds. */
export function timeoutMs(value: string | undefined, fallbackSeconds: number): number {
  if (value === undefined) return fallbackSeconds * 1000;
  const s = Number(value);
  if (value.trim() === "" || !Number.isFinite(s) || s <= 0) {
    throw new UsageError(`--timeout must be a positive number of seconds, got '${value}'`);
  }
  return s * 1000;
}

export class RelaySocket {
  private queue: Incoming[] = [];
  private wake: (() => void) | undefined;
  /** the relay's latest NIP-42 challenge on this connection */
  challenge: string | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.onmessage = (m) => {
      const text = String(m.data);
      let frame: unknown;
      try {
        frame = JSON.parse(text);
      } catch {}
      if (Array.isArray(frame) && frame[0] === "AUTH" && typeof frame[1] === "string")
        this.challenge = frame[1];
      this.push(Array.isArray(frame) ? { type: "frame", frame } : { type: "invalid", text });
    };
    ws.onclose = (e) => {
      const why = e.reason ? `: ${e.reason}` : "";
      this.push({ type: "closed", reason: `connection closed by the relay (code ${e.code}${why})` });
    };
  }

  /** Opens the socket; rejects with a ConnectError (timeout included) that explains the failure. */
  static open(url: URL, timeoutMs: number): Promise<RelaySocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url.href);
      const timer = setTimeout(() => {
        ws.onclose = null;
        ws.close();
        reject(new ConnectError("ETIMEDOUT", "no WebSocket handshake in time"));
      }, timeoutMs);
      ws.onopen = () => {
        clearTimeout(timer);
        resolve(new RelaySocket(ws));
      };
      ws.onerror = (e) => {
        clearTimeout(timer);
        const err = (e as ErrorEvent).error as { code?: string; message?: string } | undefined;
        const message = (e as ErrorEvent).message || err?.message || "WebSocket connection failed";
        // Bun words it "WebSocket connection to 'URL' failed: <why>"; the URL is already known.
        reject(new ConnectError(err?.code, message.replace(/^WebSocket connection to '[^']*' failed: /, "")));
      };
    });
  }

  send(frame: unknown[]): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** The next thing from the relay, or a timeout at `deadline` (a Date.now() value; Infinity waits). */
  async next(deadline: number): Promise<Incoming> {
    while (this.queue.length === 0) {
      const wait = deadline - Date.now();
      if (wait <= 0) return { type: "timeout" };
      let timer: Timer | undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        if (wait !== Infinity) timer = setTimeout(resolve, wait);
      });
      clearTimeout(timer);
    }
    const item = this.queue[0]!;
    // A close stays at the head: every later call sees it too.
    if (item.type !== "closed") this.queue.shift();
    return item;
  }

  close(): void {
    this.ws.onclose = null;
    this.ws.close();
    this.push({ type: "closed", reason: "closed by this client" });
  }

  private push(item: Incoming): void {
    if (this.queue.at(-1)?.type === "closed") return;
    this.queue.push(item);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
