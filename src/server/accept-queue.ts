// Closing a listening socket resets the connections waiting in its accept queue (Linux, unless
// `net.ipv4.tcp_migrate_req` is on): with two relays on one port (SO_REUSEPORT), those the
// kernel gave the old one while its event loop was busy would fail to connect at the moment it
// stops accepting. So the old one stops only once its queue is empty: the queue's length is the
// `rx_queue` of its listening socket in /proc/net/tcp (for a listening socket, the connections
// accepted by the kernel and not yet by the process), checked in the same turn as the close; and
// once every connection it accepted has had its request read (below).
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from "node:fs";

const TABLES = ["/proc/net/tcp", "/proc/net/tcp6"];
/** Listening sockets come first in the tables: their lines are in the first bytes. */
const HEAD_BYTES = 64 * 1024;
const MAX_WAIT_MS = 1000;

/** The inodes of this process's sockets (/proc/self/fd). */
function ownSockets(): Set<string> {
  const out = new Set<string>();
  let fds: string[] = [];
  try {
    fds = readdirSync("/proc/self/fd");
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) out.add(m[1]!);
    } catch {}
  }
  return out;
}

/** A table's text, or its first `max` bytes. */
function read(path: string, max?: number): string {
  if (max === undefined) {
    try {
      return readFileSync(path, "latin1");
    } catch {
      return "";
    }
  }
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const buf = Buffer.allocUnsafe(max);
    const n = readSync(fd, buf, 0, max, null);
    return buf.toString("latin1", 0, n);
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

interface Waiting {
  /** connections in the accept queues of this process's listening sockets on the port */
  queued: number;
  /** bytes received and not yet read, by socket inode, on its connections on the port */
  unread: Map<string, number>;
}

/**
 * What waits for this process on `port` (its sockets are `mine`), or undefined when that
 * cannot be read (not Linux, no /proc); `listenersOnly`: the accept queues alone, read from the
 * tables' first lines (listening sockets come first), quick enough to close right after.
 */
function waiting(port: number, mine: Set<string>, listenersOnly: boolean): Waiting | undefined {
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  let found = false;
  const w: Waiting = { queued: 0, unread: new Map() };
  for (const table of TABLES) {
    for (const line of read(table, listenersOnly ? HEAD_BYTES : undefined).split("\n")) {
      // sl local rem st tx_queue:rx_queue tr:when retrnsmt uid timeout inode
      const f = line.trim().split(/\s+/);
      const inode = f[9] ?? "";
      if (!f[1]?.endsWith(hexPort) || !mine.has(inode)) continue;
      const rx = Number.parseInt(f[4]?.split(":")[1] ?? "0", 16) || 0;
      if (f[3] === "0A") {
        found = true;
        w.queued += rx;
      } else if (f[3] === "01" && rx > 0) w.unread.set(inode, rx);
    }
  }
  return found ? w : undefined;
}

/**
 * Calls `stop` (which closes the listener) in a turn of the event loop that finds nothing in
 * its accept queue and no connection whose request may still be unread: Bun's stop also closes
 * connections that have not sent a request yet, which to their clients is a refusal too. A
 * connection with unread bytes at two looks in a row has been read in between (the event loop
 * ran): those are frames of an open WebSocket, not a request. After a second of arrivals it
 * stops anyway.
 */
export async function stopWhenQueueEmpty(port: number, stop: () => void): Promise<void> {
  const end = performance.now() + MAX_WAIT_MS;
  let before = new Map<string, number>();
  while (performance.now() < end) {
    const mine = ownSockets();
    const now = waiting(port, mine, false);
    if (now === undefined) break;
    let unread = 0;
    for (const inode of now.unread.keys()) if (!before.has(inode)) unread++;
    before = now.unread;
    // The accept queues once more, right before the close: the full tables take a while.
    if (now.queued === 0 && unread === 0 && waiting(port, mine, true)?.queued === 0) break;
    // Back to the event loop, which accepts what waits and reads the requests.
    await Bun.sleep(1);
  }
  stop();
}
