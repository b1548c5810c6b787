// What counts as "this relay" in NIP-42 `relay` tags and NIP-62 requests: the listening address
// (ws://HOST:PORT) and the configured public URL, compared after normalising scheme and host
// case, default ports and the trailing slash.

export function normalizeRelayUrl(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (u.protocol !== "ws:" && u.protocol !== "wss:") return undefined;
  const path = u.pathname.replace(/\/+$/, "");
  return `${u.protocol}//${u.host.toLowerCase()}${path}${u.search}`;
}

const LOOPBACK = ["127.0.0.1", "localhost", "[::1]"];
const ANY = ["0.0.0.0", "[::]", "::"];

/**
 * A predicate for URLs naming this relay. When listening on loopback, every loopback name is
 * accepted; when listening on all interfaces, any host at the listening port is (set publicUrl
 * to pin the name operators publish).
 */
export function ownUrlCheck(
  listenHost: string,
  port: number,
  publicUrl: () => string,
): (url: string) => boolean {
  const host = listenHost.includes(":") && !listenHost.startsWith("[") ? `[${listenHost}]` : listenHost;
  const names = LOOPBACK.includes(host) ? LOOPBACK : [host.toLowerCase()];
  const local = new Set(names.map((h) => `ws://${h}:${port}`));
  return (url) => {
    const n = normalizeRelayUrl(url);
    if (n === undefined) return false;
    const pub = publicUrl() && normalizeRelayUrl(publicUrl());
    if (pub && n === pub) return true;
    if (local.has(n)) return true;
    return ANY.includes(host) && n.startsWith("ws://") && n.endsWith(`:${port}`) && !n.slice(5).includes("/");
  };
}
