// A NATS JetStream server and relay nodes as real processes on loopback, for the cluster tests
// and bench/cluster-latency.ts. Nothing is installed here: without nats-server the callers skip.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { cliSync, listen } from "./procs.ts";

/** The nats-server binary, or undefined (the cluster tests skip). */
export const NATS_SERVER = Bun.which("nats-server") ?? undefined;

/** A TCP port nothing listens on right now. */
export function freePort(): number {
  const l = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = l.port;
  l.stop(true);
  return port;
}

async function waitFor(stream: ReadableStream<Uint8Array>, pattern: RegExp, what: string): Promise<string> {
  const reader = stream.getReader();
  let out = "";
  try {
    while (!pattern.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${what} exited before ready: ${out}`);
      out += new TextDecoder().decode(value);
    }
  } finally {
    reader.releaseLock();
  }
  // Keep draining so a full pipe never blocks the process.
  void stream.pipeTo(new WritableStream());
  return out;
}

export class Nats {
  proc: Subprocess<"ignore", "pipe", "pipe"> | undefined;
  readonly port = freePort();
  constructor(readonly dir: string) {}
  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    this.proc = Bun.spawn(
      [NATS_SERVER!, "-js", "-a", "127.0.0.1", "-p", String(this.port), "-sd", this.dir],
      {
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    await waitFor(this.proc.stderr, /Server is ready/, "nats-server");
  }
  async stop(): Promise<void> {
    this.proc?.kill("SIGTERM");
    await this.proc?.exited;
  }
}

export class Node {
  proc: Subprocess<"ignore", "pipe", "pipe"> | undefined;
  url = "";
  readonly port = freePort();
  constructor(
    readonly name: string,
    readonly dir: string,
    readonly natsUrl: string,
    readonly args: string[] = [],
  ) {}
  get http(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    // Not killed after the test that starts it: nodes start in beforeAll and restart in tests.
    const s = await listen(
      [
        "--port",
        String(this.port),
        "--data",
        join(this.dir, "db"),
        "--cluster.natsUrl",
        this.natsUrl,
        "--cluster.nodeId",
        this.name,
        "--verify.threads",
        "0",
        "--consumers.thread",
        "false",
        ...this.args,
      ],
      { keep: true },
    );
    this.proc = s.proc;
    this.url = s.url;
  }
  async kill(signal: "SIGKILL" | "SIGTERM" = "SIGTERM"): Promise<void> {
    this.proc?.kill(signal);
    await this.proc?.exited;
  }
  /** The cluster gauges of /metrics, by name without the relay_cluster_ prefix. */
  async cluster(): Promise<Record<string, number>> {
    const text = await (await fetch(`${this.http}/metrics`)).text();
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^relay_cluster_(\w+)\{[^}]*\} (\S+)$/gm)) out[m[1]!] = Number(m[2]);
    return out;
  }
  /** `relay export` of this node's data, as sorted lines. */
  export(): string[] {
    const p = cliSync(["export", "--quiet", "--data", join(this.dir, "db")]);
    if (p.code !== 0) throw new Error(`export failed: ${p.err}`);
    return p.out.split("\n").filter(Boolean).sort();
  }
}

/** Polls `check` until it returns true or the deadline passes (the machine may be slow). */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 60_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // a node restarting: ask again
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

/**
 * Every node connected, its outbox empty, and its consumer through the whole stream: all that
 * was acknowledged to any client is applied everywhere. The stream figures are sampled every
 * 2 s by each node, so the same picture must hold twice, more than a sampling period apart.
 */
export async function converged(nodes: Node[], ms = 90_000): Promise<void> {
  let seen: { seq: number; at: number } | undefined;
  await until(
    async () => {
      const all = await Promise.all(nodes.map((n) => n.cluster()));
      const seq = all[0]!.stream_seq!;
      const ok = all.every(
        (c) =>
          c.connected === 1 &&
          c.outbox === 0 &&
          c.consumer_lag === 0 &&
          c.ack_floor === seq &&
          c.stream_seq === seq,
      );
      if (!ok || seen?.seq !== seq) {
        seen = ok ? { seq, at: Date.now() } : undefined;
        return false;
      }
      return Date.now() - seen.at > 2500;
    },
    "the nodes to converge",
    ms,
  );
}
