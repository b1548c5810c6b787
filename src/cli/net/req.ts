// `relay req`: one REQ to any relay, the events it answers printed as JSONL (the format `relay
// import` reads), for checking what a relay holds or watching what it receives.
import { parseArgs, stdoutDrained } from "../args.ts";
import { guarded } from "../output.ts";
import { asksAuth, authenticate, optionalSecretKey } from "./nip42.ts";
import { ConnectError, RelaySocket, relayUrl, timeoutMs, UsageError } from "./ws-client.ts";

export const help = `relay req URL FILTER... [--timeout S] [--stream] [--nsec-file F]

Sends one REQ with the given filters to the relay at URL (ws:// or wss://), each FILTER one JSON
object argument, e.g. '{"kinds":[1],"limit":10}', and prints every event received as one JSON
line on stdout. Stops at EOSE; with --stream keeps printing live events after it until Ctrl-C
or the --timeout. NOTICE and CLOSED messages from the relay go to stderr.

  --timeout S   seconds to wait for EOSE (default 10); with --stream, how long to stream
                (default: until Ctrl-C)
  --stream      keep the subscription open after EOSE
  --nsec-file F the secret key (nsec1... or hex) to authenticate with (NIP-42) when the relay
                answers auth-required:; without it, the one in RELAY_NSEC if set

Exit status: 0 at EOSE (or at the end of a stream), 1 when the relay answers CLOSED (after
authenticating, if it asked and a key was given), the
connection fails or EOSE does not come in time, 2 for bad arguments (a filter that is not a JSON
object, a bad URL).`;

export function run(argv: string[]): Promise<number> {
  return guarded("req", async () => req(options(argv)));
}

interface Options {
  url: URL;
  filters: Record<string, unknown>[];
  timeoutMs: number;
  stream: boolean;
  /** the key that answers a NIP-42 challenge, if any */
  authKey: Uint8Array | undefined;
}

function options(argv: string[]): Options {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(argv, ["stream"]);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { positional, flags } = parsed;
  const { timeout, stream, "nsec-file": nsecFile, ...unknown } = flags;
  const extra = Object.keys(unknown)[0];
  if (extra !== undefined) throw new UsageError(`unknown option --${extra}`);
  const [url, ...filters] = positional;
  const target = relayUrl(url);
  if (filters.length === 0) throw new UsageError(`at least one FILTER is needed, e.g. '{"limit":10}'`);
  return {
    url: target,
    filters: filters.map(filter),
    // While streaming, the timeout ends the stream; without one it runs until Ctrl-C.
    timeoutMs: stream && timeout === undefined ? Infinity : timeoutMs(timeout, 10),
    stream: stream !== undefined,
    authKey: optionalSecretKey(nsecFile),
  };
}

function filter(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`filter '${text}' is not JSON: ${(e as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(`filter '${text}' must be a JSON object, like '{"kinds":[1]}'`);
  }
  return value as Record<string, unknown>;
}

async function req(o: Options): Promise<number> {
  const deadline = Date.now() + o.timeoutMs;
  let sock: RelaySocket;
  try {
    sock = await RelaySocket.open(o.url, Math.min(o.timeoutMs, 10_000));
  } catch (e) {
    if (!(e instanceof ConnectError)) throw e;
    console.error(`relay req: ${o.url.href}: ${e.message}`);
    return 1;
  }
  const subId = `req-${crypto.randomUUID().slice(0, 8)}`;
  let interrupted = false;
  const onInterrupt = () => {
    interrupted = true;
    sock.close();
  };
  // A reader that goes away (`relay req ... | head -3`) ends the command like Ctrl-C does.
  let outGone = false;
  const onOutError = (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") outGone = true;
    onInterrupt();
  };
  process.on("SIGINT", onInterrupt);
  process.on("SIGTERM", onInterrupt);
  process.stdout.on("error", onOutError);
  let eose = false;
  let authenticated = false;
  try {
    sock.send(["REQ", subId, ...o.filters]);
    for (;;) {
      const got = await sock.next(deadline);
      if (outGone) return 0;
      if (got.type === "timeout" || got.type === "closed") {
        // The end of a stream, by Ctrl-C or by the clock, is a normal end once EOSE was seen.
        if (o.stream && eose && (interrupted || got.type === "timeout")) return 0;
        if (got.type === "timeout") console.error(`relay req: no EOSE within ${o.timeoutMs / 1000} s`);
        else console.error(`relay req: ${interrupted ? "interrupted before EOSE" : got.reason}`);
        return 1;
      }
      if (got.type === "invalid") {
        console.error(`relay req: relay sent a frame that is not a JSON array: ${got.text.slice(0, 200)}`);
        continue;
      }
      const [verb, sub, body] = got.frame;
      if (verb === "NOTICE") console.error(`NOTICE ${String(sub)}`);
      else if (sub !== subId)
        continue; // AUTH challenges and anything else not about this REQ
      else if (verb === "EVENT") await write(`${JSON.stringify(body)}\n`);
      else if (verb === "CLOSED") {
        // auth-required: authenticate with the key, then ask once more.
        if (asksAuth(body) && o.authKey && !authenticated) {
          authenticated = true;
          const failed = await authenticate(sock, o.url, o.authKey, deadline, (n) =>
            console.error(`NOTICE ${n}`),
          );
          if (failed === undefined) {
            sock.send(["REQ", subId, ...o.filters]);
            continue;
          }
          console.error(`relay req: ${failed}`);
        } else if (asksAuth(body) && !o.authKey)
          console.error("relay req: the relay asks for NIP-42 AUTH: set RELAY_NSEC or give --nsec-file");
        console.error(`CLOSED ${String(body ?? "")}`.trimEnd());
        return 1;
      } else if (verb === "EOSE") {
        eose = true;
        if (!o.stream) return 0;
      }
    }
  } finally {
    process.off("SIGINT", onInterrupt);
    process.off("SIGTERM", onInterrupt);
    // Everything printed reaches the reader before main() exits the process.
    if (!outGone) await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
    process.stdout.off("error", onOutError);
    if (!interrupted) {
      try {
        sock.send(["CLOSE", subId]);
      } catch {}
      sock.close();
    }
  }
}

/** Writes to stdout, waiting when a pipe is full so a slow reader gets every event. */
async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await stdoutDrained();
}
