// The client commands as people run them: `relay req`, `relay publish` and `relay doctor` spawned
// as real processes against relays started in this process (loopback only), plus a few tiny
// fake servers for the failures a real relay does not produce (untrusted TLS, silence, no NIP-11).
import { beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bytesToHex } from "@noble/hashes/utils.js";
import { nsecEncode } from "nostr-tools/nip19";
import { getPublicKey } from "nostr-tools/pure";
import { newKey, now, RawClient, signed, startTestRelay, tempDir } from "../harness.ts";
import { cli, spawnCli, until } from "../procs.ts";

const SLOW = 20_000;

/** Runs the CLI without blocking this process, whose event loop serves the relays under test. */
const relay = cli;

const lines = (out: string): string[] => (out === "" ? [] : out.trimEnd().split("\n"));
const ids = (out: string): string[] => lines(out).map((l) => (JSON.parse(l) as { id: string }).id);

/** A port that was just in use and now refuses connections. */
async function closedPort(): Promise<number> {
  const r = startTestRelay();
  const port = r.server.port!;
  await r.destroy();
  return port;
}

describe("relay req", () => {
  const r = startTestRelay();
  const sk = newKey();
  const stored: { id: string; kind: number; created_at: number }[] = [];
  beforeAll(async () => {
    const c = await RawClient.connect(r.url);
    for (const [i, kind] of [1, 1, 7, 1].entries()) {
      const e = signed(sk, { kind, created_at: now() - 100 + i, content: `event ${i}` });
      expect((await c.publish(e))[2]).toBe(true);
      stored.push(e);
    }
    c.close();
  });

  test(
    "prints exactly the stored events that match, one JSON line each, newest first, and exits 0 at EOSE",
    async () => {
      const res = await relay(["req", r.url, '{"kinds":[1]}']);
      expect(res.err).toBe("");
      expect(res.code).toBe(0);
      const want = stored.filter((e) => e.kind === 1).sort((a, b) => b.created_at - a.created_at);
      expect(ids(res.out)).toEqual(want.map((e) => e.id));
      expect(lines(res.out).map((l) => JSON.parse(l))).toEqual(JSON.parse(JSON.stringify(want)));
    },
    SLOW,
  );

  test(
    "sends every filter argument in the one REQ",
    async () => {
      const [k7] = stored.filter((e) => e.kind === 7);
      const res = await relay(["req", r.url, '{"kinds":[7]}', `{"ids":["${stored[0]!.id}"]}`]);
      expect(res.code).toBe(0);
      expect(ids(res.out).sort()).toEqual([k7!.id, stored[0]!.id].sort());
    },
    SLOW,
  );

  test(
    "keeps printing live events after EOSE with --stream until the timeout, then exits 0",
    async () => {
      const p = spawnCli(["req", r.url, '{"kinds":[1]}', "--stream", "--timeout", "2"]);
      // The stored events come first; once one is here the subscription is live on the relay.
      await until("a first line", () => p.stdout().includes("\n") || p.proc.exitCode !== null);
      const live = signed(sk, { kind: 1, content: "live" });
      const c = await RawClient.connect(r.url);
      expect((await c.publish(live))[2]).toBe(true);
      c.close();
      expect(await p.exited()).toBe(0);
      const text = p.stdout();
      expect(ids(text).slice(-1)).toEqual([live.id]);
      expect(ids(text)).toHaveLength(stored.filter((e) => e.kind === 1).length + 1);
    },
    SLOW,
  );

  test(
    "refuses a filter that is not a JSON object, and a URL that is not ws(s), with exit 2",
    async () => {
      for (const args of [
        [r.url, "{kinds:[1]}"],
        [r.url, "[1]"],
        [r.url],
        ["http//nope", "{}"],
        ["ftp://127.0.0.1/", "{}"],
      ]) {
        const res = await relay(["req", ...args]);
        expect(res.code, args.join(" ")).toBe(2);
        expect(res.err).toStartWith("relay req: ");
        expect(res.err).not.toContain("    at ");
      }
    },
    SLOW,
  );

  test(
    "prints the CLOSED reason on stderr and exits 1 when the relay refuses the REQ",
    async () => {
      const authed = startTestRelay({ "auth.reads": "true" });
      const res = await relay(["req", authed.url, "{}"]);
      expect(res.code).toBe(1);
      expect(res.out).toBe("");
      expect(res.err).toContain("CLOSED auth-required:");
    },
    SLOW,
  );

  test(
    "says the connection was refused and exits 1 when nothing listens at the URL",
    async () => {
      const res = await relay(["req", `ws://127.0.0.1:${await closedPort()}`, "{}"]);
      expect(res.code).toBe(1);
      expect(res.err).toContain("connection refused");
    },
    SLOW,
  );
});

describe("relay publish", () => {
  const r = startTestRelay();

  test(
    "signs with the key from RELAY_NSEC, publishes, prints OK true and exits 0",
    async () => {
      const sk = newKey();
      const res = await relay(
        [
          "publish",
          r.url,
          "--kind",
          "1",
          "--content",
          "hello relay",
          "--tag",
          "t,nostr",
          "--tag",
          "x,a\\,b,c",
        ],
        { env: { RELAY_NSEC: nsecEncode(sk) } },
      );
      expect(res.err).toBe("");
      expect(res.code).toBe(0);
      const m = /^OK ([0-9a-f]{64}) true\n$/.exec(res.out);
      expect(m).not.toBeNull();
      const c = await RawClient.connect(r.url);
      const start = c.frames.length;
      await c.req("s", { ids: [m![1]] });
      c.close();
      const ev = c.frames.slice(start).find((f) => f[0] === "EVENT")?.[2] as Record<string, unknown>;
      expect(ev).toMatchObject({
        pubkey: getPublicKey(sk),
        kind: 1,
        content: "hello relay",
        tags: [
          ["t", "nostr"],
          ["x", "a,b", "c"],
        ],
      });
    },
    SLOW,
  );

  test(
    "takes a hex key from --nsec-file too",
    async () => {
      const d = tempDir("relay-cli-client-");
      const file = join(d, "key");
      writeFileSync(file, `${bytesToHex(newKey())}\n`, { mode: 0o600 });
      const res = await relay(["publish", r.url, "--nsec-file", file, "--content", "from a file"]);
      expect(res.code).toBe(0);
      expect(res.out).toMatch(/^OK [0-9a-f]{64} true\n$/);
    },
    SLOW,
  );

  test(
    "publishes an already signed event from standard input with --event-file -",
    async () => {
      const e = signed(newKey(), { content: "signed elsewhere" });
      const res = await relay(["publish", r.url, "--event-file", "-"], { stdin: JSON.stringify(e) });
      expect(res.code).toBe(0);
      expect(res.out).toBe(`OK ${e.id} true\n`);
    },
    SLOW,
  );

  test(
    "prints OK false with the relay's reason and exits 1 for an event dated far in the future",
    async () => {
      const d = tempDir("relay-cli-client-");
      const file = join(d, "future.json");
      const e = signed(newKey(), { created_at: now() + 86_400 });
      writeFileSync(file, JSON.stringify(e));
      const res = await relay(["publish", r.url, "--event-file", file]);
      expect(res.code).toBe(1);
      expect(res.out).toStartWith(`OK ${e.id} false invalid:`);
    },
    SLOW,
  );

  test(
    "exits 2 without a secret key, and never takes one from an argument",
    async () => {
      const missing = await relay(["publish", r.url, "--content", "x"]);
      expect(missing.code).toBe(2);
      expect(missing.err).toContain("RELAY_NSEC");
      const flag = await relay(["publish", r.url, "--nsec", nsecEncode(newKey())]);
      expect(flag.code).toBe(2);
      expect(flag.err).toContain("shell history");
      expect(flag.out).toBe("");
    },
    SLOW,
  );

  test(
    "exits 2 for an nsec with a bad checksum, without echoing the key",
    async () => {
      const nsec = nsecEncode(newKey());
      const bad = nsec.slice(0, -1) + (nsec.endsWith("q") ? "p" : "q");
      const res = await relay(["publish", r.url, "--content", "x"], { env: { RELAY_NSEC: bad } });
      expect(res.code).toBe(2);
      expect(res.err).toContain("not valid");
      expect(res.err).not.toContain(bad);
    },
    SLOW,
  );
});

describe("relay req and relay publish with NIP-42 AUTH", () => {
  test(
    "publish authenticates with its key on auth-required:, sends the event again and exits 0",
    async () => {
      const r = startTestRelay({ "auth.writes": "true" });
      const sk = newKey();
      const res = await relay(["publish", r.url, "--content", "authenticated"], {
        env: { RELAY_NSEC: nsecEncode(sk) },
      });
      expect(res.err).toBe("");
      expect(res.code).toBe(0);
      const id = /^OK ([0-9a-f]{64}) true\n$/.exec(res.out)?.[1];
      expect(id).toBeDefined();
      const c = await RawClient.connect(r.url);
      expect(await c.req("mine", { authors: [getPublicKey(sk)] })).toEqual([id!]);
      c.close();
    },
    SLOW,
  );

  test(
    "publish --event-file authenticates with --nsec-file, and without a key prints the refusal and exits 1",
    async () => {
      const r = startTestRelay({ "auth.writes": "true" });
      const d = tempDir("relay-cli-client-");
      const keyFile = join(d, "key");
      writeFileSync(keyFile, nsecEncode(newKey()), { mode: 0o600 });
      const e = signed(newKey(), { content: "signed elsewhere" });
      const without = await relay(["publish", r.url, "--event-file", "-"], { stdin: JSON.stringify(e) });
      expect(without.code).toBe(1);
      expect(without.out).toStartWith(`OK ${e.id} false auth-required: `);
      expect(without.err).toContain("RELAY_NSEC");
      const res = await relay(["publish", r.url, "--event-file", "-", "--nsec-file", keyFile], {
        stdin: JSON.stringify(e),
      });
      expect(res.code).toBe(0);
      expect(res.out).toBe(`OK ${e.id} true\n`);
    },
    SLOW,
  );

  test(
    "req on an auth.reads relay authenticates with RELAY_NSEC, gets its events and exits 0; without a key exits 1",
    async () => {
      const r = startTestRelay({ "auth.reads": "true" });
      const sk = newKey();
      const e = signed(sk, { content: "members only" });
      const c = await RawClient.connect(r.url);
      expect((await c.publish(e))[2]).toBe(true);
      c.close();
      const res = await relay(["req", r.url, '{"kinds":[1]}'], { env: { RELAY_NSEC: nsecEncode(newKey()) } });
      expect(res.err).toBe("");
      expect(res.code).toBe(0);
      expect(ids(res.out)).toEqual([e.id]);
      const without = await relay(["req", r.url, '{"kinds":[1]}']);
      expect(without.code).toBe(1);
      expect(without.out).toBe("");
      expect(without.err).toContain("CLOSED auth-required: ");
      expect(without.err).toContain("RELAY_NSEC");
    },
    SLOW,
  );

  test(
    "req for a restricted kind authenticates and gets only the DMs its key may read",
    async () => {
      const r = startTestRelay();
      const author = newKey();
      const recipient = newKey();
      const dm = signed(author, { kind: 4, tags: [["p", getPublicKey(recipient)]], content: "secret" });
      const other = signed(author, { kind: 4, tags: [["p", getPublicKey(newKey())]], content: "not yours" });
      const c = await RawClient.connect(r.url);
      for (const x of [dm, other]) expect((await c.publish(x))[2]).toBe(true);
      c.close();
      const res = await relay(["req", r.url, '{"kinds":[4]}'], {
        env: { RELAY_NSEC: nsecEncode(recipient) },
      });
      expect(res.code).toBe(0);
      expect(ids(res.out)).toEqual([dm.id]);
    },
    SLOW,
  );
});

describe("relay doctor", () => {
  test(
    "reports a healthy relay's NIP-11 document and REQ round trip time, and exits 0",
    async () => {
      const r = startTestRelay();
      const c = await RawClient.connect(r.url);
      await c.publish(signed(newKey()));
      c.close();
      const res = await relay(["doctor", r.url]);
      expect(res.code).toBe(0);
      expect(res.out).toContain('NIP-11: name "bunstr relay", bunstr-relay');
      expect(res.out).toContain("supported NIPs: 1, 9, 11");
      expect(res.out).toMatch(/round trip time [\d.]+ ms, 1 event/);
      expect(res.out).toContain("verdict: healthy");

      const json = await relay(["doctor", r.url, "--json"]);
      expect(json.code).toBe(0);
      const report = JSON.parse(json.out);
      expect(report).toMatchObject({ verdict: "healthy", exit: 0, nip11: { software: "bunstr-relay" } });
      expect(report.rtt_ms).toBeGreaterThanOrEqual(0);
      expect(report.checks.map((c: { step: string }) => c.step)).toEqual([
        "dns",
        "tcp",
        "tls",
        "nip11",
        "websocket",
        "req",
      ]);
    },
    SLOW,
  );

  test(
    "says 'no events' when an empty relay answers EOSE with nothing, and still calls it healthy",
    async () => {
      const res = await relay(["doctor", startTestRelay().url]);
      expect(res.code).toBe(0);
      expect(res.out).toContain("no events");
    },
    SLOW,
  );

  test(
    "reports connection refused and exits 1 on a port where the relay has stopped",
    async () => {
      const res = await relay(["doctor", `ws://127.0.0.1:${await closedPort()}`]);
      expect(res.code).toBe(1);
      expect(res.out).toContain("connection refused: relay down or firewall blocks the port");
      expect(res.out).toContain("verdict: unreachable");
    },
    SLOW,
  );

  test(
    "reports the REQ refused and exits 1 when the relay requires AUTH for reads",
    async () => {
      const res = await relay(["doctor", startTestRelay({ "auth.reads": "true" }).url]);
      expect(res.code).toBe(1);
      expect(res.out).toContain('REQ refused: CLOSED "auth-required:');
      expect(res.out).toContain("NIP-42 AUTH");
      expect(res.out).toContain("auth_required true");
      expect(res.out).toContain("verdict: degraded");
    },
    SLOW,
  );

  test(
    "reports a missing NIP-11 document as degraded and exits 1",
    async () => {
      // A bare relay: answers every REQ with EOSE, and HTTP with 404.
      const server = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch: (req, s) => (s.upgrade(req) ? undefined : new Response("not here", { status: 404 })),
        websocket: {
          message(ws, m) {
            const [verb, sub] = JSON.parse(String(m));
            if (verb === "REQ") ws.send(JSON.stringify(["EOSE", sub]));
          },
        },
      });
      try {
        const res = await relay(["doctor", `ws://127.0.0.1:${server.port}`, "--json"]);
        expect(res.code).toBe(1);
        const report = JSON.parse(res.out);
        expect(report.verdict).toBe("degraded");
        expect(report.checks.find((c: { step: string }) => c.step === "nip11")).toMatchObject({
          status: "warn",
          detail: expect.stringContaining("HTTP 404: no NIP-11 document"),
        });
      } finally {
        server.stop(true);
      }
    },
    SLOW,
  );

  test(
    "reports a TLS error and exits 1 when the certificate is not trusted",
    async () => {
      const server = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        tls: { cert: TEST_CERT, key: TEST_KEY },
        fetch: () => new Response("hi"),
      });
      try {
        const res = await relay(["doctor", `wss://127.0.0.1:${server.port}`]);
        expect(res.code).toBe(1);
        expect(res.out).toMatch(/fail {2}tls {8}TLS error: /);
      } finally {
        server.stop(true);
      }
    },
    SLOW,
  );

  test(
    "reports a timeout and exits 1 when the port accepts connections but never answers",
    async () => {
      const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
      try {
        const res = await relay(["doctor", `ws://127.0.0.1:${silent.port}`, "--timeout", "0.5"]);
        expect(res.code).toBe(1);
        expect(res.out).toContain("no HTTP answer in time");
        expect(res.out).toContain("timeout: the relay is overloaded or unreachable");
      } finally {
        silent.stop(true);
      }
    },
    SLOW,
  );

  test(
    "exits 2, like the other commands, for a missing or malformed URL and bad options",
    async () => {
      const bad = [
        [],
        ["ftp://127.0.0.1/"],
        ["ws://127.0.0.1:1", "--timeout", "soon"],
        ["ws://127.0.0.1:1", "--timeout"],
      ];
      for (const args of bad) {
        const res = await relay(["doctor", ...args]);
        expect(res.code, args.join(" ")).toBe(2);
        expect(res.err).toStartWith("relay doctor: ");
      }
    },
    SLOW,
  );
});

// A throwaway self-signed certificate for CN=example.org (valid to 2126), made for this test only:
// doctor must refuse to trust it. Not a secret; it protects nothing.
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBgzCCASmgAwIBAgIUPcPFnebMJ67HTVSay3634HHYRlwwCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLZXhhbXBsZS5vcmcwIBcNMjYxMTIxMTIyNTE1WhgPMjEyNjEw
MjgxMjI1MTVaMBYxFDASBgNVBAMMC2V4YW1wbGUub3JnMFkwEwYHKoZIzj0CAQYI
KoZIzj0DAQcDQgAEdE6geKPassBI4gT3iJGPpYGcWOBOVJLY65/tE2OwFRgpvzf0
IYGthKVGPRL/egCNsHUgwGrZIV0fMoGnBInQsqNTMFEwHQYDVR0OBBYEFIOhh5GY
aGm5Uu3Ow3Gu80aUcH0eMB8GA1UdIwQYMBaAFIOhh5GYaGm5Uu3Ow3Gu80aUcH0e
MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhAKO+9PltwiejVe2S
2KevgcbO1kJkG8tF5Fe7iF7LNPf/AiABWZrgRH0qrXoHB0QvL6A9sQKhbQI9aHOT
xfT0qMF9yw==
-----END CERTIFICATE-----
`;
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg0qA0uTG0fauUKWXP
Iheggd/iXFElpNY0vtnT8WSOMZuhRANCAAR0TqB4o9qywEjiBPeIkY+lgZxY4E5U
ktjrn+0TY7AVGCm/N/Qhga2EpUY9Ev96AI2wdSDAatkhXR8ygacEidCy
-----END PRIVATE KEY-----
`;
