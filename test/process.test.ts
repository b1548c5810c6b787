// The relay as operators run it: a real process started from src/main.ts, configured by flags
// and environment, stopped by SIGTERM with every acknowledged event kept.
import { describe, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getPublicKey } from "nostr-tools/pure";
import { newKey, now, RawClient, signed, tempDir } from "./harness.ts";
import { cliSync, listen, stop } from "./procs.ts";

const spawnRelay = (args: string[], env: Record<string, string> = {}) => listen(args, { env });

describe("the relay process", () => {
  test("environment chooses host, port and data; SIGTERM flushes and exits 0; data survives restart", async () => {
    const dir = tempDir();
    const { proc, url } = await spawnRelay([], { RELAY_PORT: "0", RELAY_HOST: "127.0.0.1", RELAY_DATA: dir });
    expect(url).toStartWith("ws://127.0.0.1:");
    const c = await RawClient.connect(url);
    const sk = newKey();
    const t0 = now();
    const events = Array.from({ length: 50 }, (_, i) =>
      signed(sk, { created_at: t0 - i, content: `note ${i}` }),
    );
    for (const e of events) c.send(["EVENT", e]);
    for (const e of events) expect((await c.ok(e.id))[2]).toBe(true);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);

    const again = await spawnRelay(["--port", "0", "--data", dir]);
    const c2 = await RawClient.connect(again.url);
    expect(await c2.req("all", { authors: [getPublicKey(sk)] })).toEqual(events.map((e) => e.id));
    c2.close();
    again.proc.kill("SIGINT");
    expect(await again.proc.exited).toBe(0);
  });

  // Without the tuning variables in its environment, serve executes itself again with them.
  const untuned = {
    MIMALLOC_PURGE_DELAY: undefined,
    BUN_JSC_thresholdForFTLOptimizeAfterWarmUp: undefined,
  } as never;

  test("executing itself again keeps Bun's own flags: `bun --heap-prof src/main.ts` writes a heap profile", async () => {
    const dir = tempDir();
    const prof = tempDir();
    const relay = await listen(["serve", "--port", "0", "--data", join(dir, "data")], {
      bunFlags: ["--heap-prof", `--heap-prof-dir=${prof}`],
      env: untuned,
    });
    expect(relay.stdout()).toContain(
      // started without them, it runs with them: executed again
      'runtime="settings from the environment"',
    );
    await stop(relay);
    expect(readdirSync(prof).filter((f) => f.endsWith(".heapprofile")).length).toBe(1);
  });

  // The CPU profiler's SIGPWR, pending across execve, would kill the new image (a start in ten
  // at a 10 µs interval before this was handled): under it the process does not execute itself again.
  test("under `bun --cpu-prof` it runs as started, writes a profile and says what it runs without", async () => {
    const prof = tempDir();
    for (let i = 0; i < 3; i++) {
      const relay = await listen(["serve", "--port", "0", "--data", join(tempDir(), "data")], {
        bunFlags: ["--cpu-prof", "--cpu-prof-interval=10", `--cpu-prof-dir=${prof}`],
        env: untuned,
      });
      expect(relay.stdout()).toContain("a CPU profiler samples this process with signals");
      await stop(relay);
    }
    expect(readdirSync(prof).filter((f) => f.endsWith(".cpuprofile")).length).toBe(3);
  });

  test("live settings reload on SIGHUP without dropping connections; a bad file keeps the old config", async () => {
    const dir = tempDir();
    const file = join(dir, "relay.toml");
    writeFileSync(file, '[info]\nname = "first"\n[limits]\nmaxLimit = 5000\n');
    const relay = await spawnRelay(["--config", file, "--port", "0", "--data", join(dir, "db")]);
    const { proc, url } = relay;
    const http = url.replace("ws://", "http://");
    const info = async () =>
      (await (await fetch(http, { headers: { Accept: "application/nostr+json" } })).json()) as {
        name: string;
        limitation: { max_limit: number };
      };
    expect((await info()).name).toBe("first");
    const c = await RawClient.connect(url);

    writeFileSync(file, '[info]\nname = "second"\n[limits]\nmaxLimit = 1000\n');
    proc.kill("SIGHUP");
    for (let i = 0; i < 100 && (await info()).name !== "second"; i++) await Bun.sleep(20);
    expect(await info()).toMatchObject({ name: "second", limitation: { max_limit: 1000 } });

    writeFileSync(file, '[info]\nname = "third"\n[limits]\nmaxLimit = "lots"\n');
    proc.kill("SIGHUP");
    await Bun.sleep(300);
    expect((await info()).name).toBe("second");
    expect(c.closed).toBeUndefined();
    expect(await c.req("still", { limit: 1 })).toEqual([]);
    c.close();
    proc.kill("SIGTERM");
    expect(await relay.exited()).toBe(0);
    const stderr = relay.stderr();
    expect(stderr).toContain(`${file} line 4: limits.maxLimit (from file): expected an integer`);
  });

  const cli: [string, string[], number, RegExp][] = [
    [
      "--version names the version, that it runs from source, and no built-in libsecp256k1",
      ["--version"],
      0,
      new RegExp(
        `^relay \\d+\\.\\d+\\.\\d+ from source on ${process.platform}-${process.arch} \\(Bun ${Bun.version.replaceAll(".", "\\.")}\\); no libsecp256k1 built in \\(the host's is used if it has one\\)\n$`,
      ),
    ],
    ["--help lists the commands", ["--help"], 0, /commands:[\s\S]*serve/],
    ["serve --help explains the options", ["serve", "--help"], 0, /--config FILE/],
    ["config --print-default prints the sample", ["config", "--print-default"], 0, /\[limits\]/],
  ];
  for (const [what, args, code, pattern] of cli) {
    test(`${what}`, () => {
      const r = cliSync(args);
      expect(r.code).toBe(code);
      expect(r.out).toMatch(pattern);
    });
  }

  test("an unknown command exits 2 with usage on stderr", () => {
    const r = cliSync(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("unknown command 'frobnicate'");
  });

  test("a bad setting exits 78 naming the key", () => {
    const r = cliSync(["--port", "nope"]);
    expect(r.code).toBe(78);
    expect(r.err).toContain("configuration error: port (from flag)");
  });
});

describe("data directories", () => {
  test("a data path with a dot in its name is a directory, existing or not", async () => {
    const parent = tempDir();
    for (const name of ["data.v2", "existing.dir"]) {
      const dir = join(parent, name);
      if (name === "existing.dir") (await import("node:fs")).mkdirSync(dir);
      const { proc } = await spawnRelay(["--port", "0", "--data", dir]);
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      expect((await import("node:fs")).statSync(dir).isDirectory()).toBe(true);
    }
  });
});
