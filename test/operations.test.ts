// The relay as an operator runs it, seen from outside: its log lines (level, text or JSON) and a
// config file replaced the way editors and deployment tools replace files.
import { describe, expect, test } from "bun:test";
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RawClient, tempDir } from "./harness.ts";
import { type Spawned, spawnCli } from "./procs.ts";

/** A relay process whose stdout and stderr are collected line by line as they come. */
class Running {
  readonly out: string[] = [];
  readonly err: string[] = [];
  private rest = { out: "", err: "" };
  private wake: (() => void)[] = [];
  readonly proc: Spawned["proc"];

  constructor(args: string[]) {
    this.proc = spawnCli(args, {
      onStdout: (t) => this.take("out", t),
      onStderr: (t) => this.take("err", t),
    }).proc;
  }

  private take(stream: "out" | "err", text: string) {
    const lines = (this.rest[stream] + text).split("\n");
    this.rest[stream] = lines.pop()!;
    this[stream].push(...lines);
    for (const w of this.wake.splice(0)) w();
  }

  /** The first line of `stream` that passes `pred`, waiting up to 30 s for it. */
  async line(stream: "out" | "err", pred: (l: string) => boolean): Promise<string> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const found = this[stream].find(pred);
      if (found !== undefined) return found;
      if (Date.now() > deadline || this.proc.exitCode !== null)
        throw new Error(`no such line; stdout:\n${this.out.join("\n")}\nstderr:\n${this.err.join("\n")}`);
      await new Promise<void>((r) => {
        this.wake.push(r);
        setTimeout(r, 200);
      });
    }
  }
}

function spawn(args: string[]): Running {
  const dir = tempDir("relay-ops-");
  return new Running(["--port", "0", "--data", join(dir, "db"), ...args]);
}

/** Polls `read` until it gives `want` (the reload happens after a debounce, off our clock). */
async function until<T>(read: () => Promise<T>, want: T): Promise<T> {
  let got = await read();
  for (let i = 0; i < 300 && JSON.stringify(got) !== JSON.stringify(want); i++) {
    await Bun.sleep(50);
    got = await read();
  }
  return got;
}

describe("logs", () => {
  test("log.format = json at debug: one object per line, connections opened and closed with the client address", async () => {
    const r = spawn(["--log.level", "debug", "--log.format", "json", "--http.realIpHeader", "X-Real-IP"]);
    const first = JSON.parse(await r.line("out", (l) => l !== "")) as Record<string, unknown>;
    expect(first).toMatchObject({ level: "info", log: "debug,json", realIp: "X-Real-IP" });
    expect(first.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const url = /^relay listening on (ws:\/\/\S+)$/.exec(String(first.msg))![1]!;
    const c = await RawClient.connect(url, { "X-Real-IP": "203.0.113.7" });
    c.ws.close(1000, "bye");
    const closed = JSON.parse(await r.line("out", (l) => l.includes('"connection closed"')));
    expect(closed).toMatchObject({ level: "debug", ip: "203.0.113.7", code: 1000, reason: "bye" });
    const opened = JSON.parse(await r.line("out", (l) => l.includes('"connection opened"')));
    expect(opened).toMatchObject({ level: "debug", ip: "203.0.113.7", conn: closed.conn });
    for (const l of [...r.out, ...r.err].filter((l) => l !== "")) expect(() => JSON.parse(l)).not.toThrow();
  }, 120_000);

  test("at the default level (info, text) connections are not logged and refusals come as one summary line", async () => {
    const r = spawn(["--rate.maxConnectionsPerIp", "1", "--log.summarySeconds", "1"]);
    const first = await r.line("out", (l) => l !== "");
    expect(first).toMatch(/^\S+Z info {2}relay listening on ws:\/\/\S+ version=\S+ pid=\d+ .*log=info,text$/);
    const url = /listening on (ws:\/\/\S+)/.exec(first)![1]!;
    const c = await RawClient.connect(url);
    const http = url.replace("ws://", "http://");
    for (let i = 0; i < 3; i++) {
      const res = await fetch(http, { headers: { Upgrade: "websocket", Connection: "Upgrade" } });
      expect(res.status).toBe(429);
    }
    // The three may fall in one summary period or straddle two.
    const summaries = () => r.out.filter((l) => l.includes(" refused "));
    const counted = () =>
      summaries().reduce((n, l) => n + Number(/connection\.rate-limited=(\d+)$/.exec(l)?.[1] ?? 0), 0);
    await r.line("out", () => counted() >= 3);
    for (const l of summaries())
      expect(l).toMatch(/ info {2}refused (\d) in 1 s connection\.rate-limited=\1$/);
    expect(counted()).toBe(3);
    c.close();
    expect(r.out.filter((l) => l.includes("connection"))).toEqual(summaries());
    expect(r.err).toEqual([]);
  }, 120_000);
});

describe("a config file replaced by rename (vim, sed -i, Ansible, mv)", () => {
  test("each replacement is applied; a bad one keeps the running config and the log says why", async () => {
    const dir = tempDir("relay-ops-conf-");
    const file = join(dir, "relay.toml");
    const toml = (name: string, extra = "") => `[info]\nname = "${name}"\n${extra}`;
    writeFileSync(file, toml("first"));
    const r = spawn(["--config", file, "--log.format", "json"]);
    const first = JSON.parse(await r.line("out", (l) => l !== "")) as { msg: string };
    const http = /listening on (ws:\/\/\S+)/.exec(first.msg)![1]!.replace("ws://", "http://");
    const name = async () =>
      (
        (await (await fetch(http, { headers: { Accept: "application/nostr+json" } })).json()) as {
          name: string;
        }
      ).name;
    expect(await name()).toBe("first");
    const replace = (text: string, n: number) => {
      const tmp = join(dir, `.relay.toml.${n}`);
      writeFileSync(tmp, text);
      renameSync(tmp, file);
    };
    for (const [n, next] of ["second", "third", "fourth"].entries()) {
      replace(toml(next), n);
      expect(await until(name, next)).toBe(next);
    }

    // A pubkey that is neither hex nor npub: refused, named, and the running config stays.
    replace(toml("fifth", 'pubkey = "npub1nope"\n'), 9);
    const refused = JSON.parse(await r.line("err", (l) => l.includes("not reloaded"))) as Record<
      string,
      string
    >;
    expect(refused.level).toBe("error");
    expect(refused.error).toBe(
      `${file} line 3: info.pubkey (from file): 'npub1nope' is not a pubkey (64 hex digits or an npub)`,
    );
    expect(await name()).toBe("fourth");

    // The watch outlives the bad file: the next good replacement applies.
    replace(toml("sixth"), 10);
    expect(await until(name, "sixth")).toBe("sixth");
  }, 120_000);
});
