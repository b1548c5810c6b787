// `relay publish`: sign an event (or take an already signed one) and send it to any relay, printing
// the relay's OK answer, for testing a relay's write rules or posting operator announcements.
import { readFileSync } from "node:fs";
import { finalizeEvent } from "nostr-tools/pure";
import { parseArgs, takeRepeated } from "../args.ts";
import { guarded } from "../output.ts";
import { asksAuth, authenticate, optionalSecretKey, secretKey } from "./nip42.ts";
import { ConnectError, RelaySocket, relayUrl, timeoutMs, UsageError } from "./ws-client.ts";

export const help = `relay publish URL [--kind K] [--content TEXT] [--tag name,value,...]... [--nsec-file F]
relay publish URL --event-file F|- [--nsec-file F]

Sends one event to the relay at URL (ws:// or wss://) and prints its answer as
'OK <id> true|false <message>'.

The first form makes and signs the event: kind K (default 1), the given content (default
empty), created_at now, and one tag per --tag, its fields separated by commas ('\\,' is a comma
inside a field, '\\\\' a backslash), e.g. --tag t,nostr --tag p,<hex pubkey>,wss://relay.example.
The secret key (nsec1... or 64 hex characters) is read from the file given with --nsec-file or,
without it, from the environment variable RELAY_NSEC; never from an argument, which would be
kept in shell history and shown in the process list.

The second form sends an already signed event, one JSON object read from the file F or, with
'-', from standard input, as it is: the relay decides whether it is valid.

When the relay answers auth-required: (NIP-42), the command authenticates with the same secret
key (RELAY_NSEC or --nsec-file; with --event-file, only if one is given) and sends the event
once more.

  --timeout S   seconds to wait for the connection and the OK (default 10)

Exit status: 0 when the relay answers OK true, 1 for OK false (auth-required: included, when no
key is given or AUTH is refused), no answer in time or a failed connection, 2 for bad arguments (no secret key, a bad nsec, an unreadable event file).`;

/** Flags someone may try for the key; each is refused with the reason rather than "unknown option". */
const KEY_FLAGS = ["nsec", "sec", "secret", "key", "private-key", "privkey"];

export function run(argv: string[]): Promise<number> {
  return guarded("publish", async () => publish(await options(argv)));
}

interface Options {
  url: URL;
  event: { id: string } & Record<string, unknown>;
  timeoutMs: number;
  /** the key that answers a NIP-42 challenge, if any */
  authKey: Uint8Array | undefined;
}

async function options(argv: string[]): Promise<Options> {
  const { values: tagArgs, rest } = takeRepeated(argv, "tag");
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(rest);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { positional, flags } = parsed;
  const { kind, content, timeout, ...others } = flags;
  const eventFile = others["event-file"];
  const nsecFile = others["nsec-file"];
  for (const f of Object.keys(others)) {
    if (KEY_FLAGS.includes(f)) {
      throw new UsageError(
        `--${f} is not accepted: arguments land in shell history; use RELAY_NSEC or --nsec-file`,
      );
    }
    if (f !== "event-file" && f !== "nsec-file") throw new UsageError(`unknown option --${f}`);
  }
  if (positional.length !== 1) {
    throw new UsageError(
      positional.length === 0 ? "a relay URL is needed" : `unexpected argument ${positional[1]}`,
    );
  }
  const url = relayUrl(positional[0]);
  const wait = timeoutMs(timeout, 10);
  if (eventFile !== undefined) {
    const clash = [
      kind !== undefined && "--kind",
      content !== undefined && "--content",
      tagArgs.length > 0 && "--tag",
    ].find(Boolean);
    if (clash) throw new UsageError(`--event-file sends a signed event as it is; ${clash} does not apply`);
    return { url, event: await readEvent(eventFile), timeoutMs: wait, authKey: optionalSecretKey(nsecFile) };
  }
  const secret = secretKey(nsecFile);
  const event = finalizeEvent(
    {
      kind: kindOf(kind),
      created_at: Math.floor(Date.now() / 1000),
      tags: tagArgs.map(tagOf),
      content: content ?? "",
    },
    secret,
  );
  return { url, event: event as unknown as Options["event"], timeoutMs: wait, authKey: secret };
}

function kindOf(value: string | undefined): number {
  if (value === undefined) return 1;
  if (!/^\d+$/.test(value) || Number(value) > 65535) {
    throw new UsageError(`--kind must be an integer from 0 to 65535, got '${value}'`);
  }
  return Number(value);
}

/** 'name,value,...' with '\,' for a comma and '\\' for a backslash inside a field. */
function tagOf(value: string): string[] {
  const fields: string[] = [];
  let field = "";
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === "\\" && (value[i + 1] === "," || value[i + 1] === "\\")) field += value[++i];
    else if (c === ",") {
      fields.push(field);
      field = "";
    } else field += c;
  }
  fields.push(field);
  if (fields[0] === "") throw new UsageError(`--tag '${value}' needs a tag name before the first comma`);
  return fields;
}

async function readEvent(file: string): Promise<Options["event"]> {
  let text: string;
  try {
    text = file === "-" ? await Bun.stdin.text() : readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read --event-file ${file}: ${(e as NodeJS.ErrnoException).code ?? e}`);
  }
  const name = file === "-" ? "standard input" : file;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${name} is not JSON: ${(e as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(`${name} must hold one event, a JSON object`);
  }
  const id = (value as { id?: unknown }).id;
  if (typeof id !== "string") throw new UsageError(`${name} holds no signed event: it has no "id"`);
  return value as Options["event"];
}

async function publish(o: Options): Promise<number> {
  const deadline = Date.now() + o.timeoutMs;
  let sock: RelaySocket;
  try {
    sock = await RelaySocket.open(o.url, o.timeoutMs);
  } catch (e) {
    if (!(e instanceof ConnectError)) throw e;
    console.error(`relay publish: ${o.url.href}: ${e.message}`);
    return 1;
  }
  let authenticated = false;
  try {
    sock.send(["EVENT", o.event]);
    for (;;) {
      const got = await sock.next(deadline);
      if (got.type === "timeout") {
        console.error(`relay publish: no OK for ${o.event.id} within ${o.timeoutMs / 1000} s`);
        return 1;
      }
      if (got.type === "closed") {
        console.error(`relay publish: ${got.reason} before answering OK`);
        return 1;
      }
      if (got.type === "invalid") continue;
      const [verb, a, b, c] = got.frame;
      if (verb === "NOTICE") console.error(`NOTICE ${String(a)}`);
      else if (verb === "OK" && a === o.event.id) {
        // auth-required: authenticate with the key, then send the event once more.
        if (b !== true && asksAuth(c) && o.authKey && !authenticated) {
          authenticated = true;
          const failed = await authenticate(sock, o.url, o.authKey, deadline, (n) =>
            console.error(`NOTICE ${n}`),
          );
          if (failed === undefined) {
            sock.send(["EVENT", o.event]);
            continue;
          }
          console.error(`relay publish: ${failed}`);
        } else if (b !== true && asksAuth(c) && !o.authKey)
          console.error("relay publish: the relay asks for NIP-42 AUTH: set RELAY_NSEC or give --nsec-file");
        console.log(`OK ${a} ${b === true} ${String(c ?? "")}`.trimEnd());
        return b === true ? 0 : 1;
      }
    }
  } finally {
    sock.close();
  }
}
