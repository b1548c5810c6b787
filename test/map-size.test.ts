// The store's map size (src/lmdb/map-size.ts) where the address space is limited: an arm64
// kernel with 39-bit virtual addresses leaves user space 512 GiB, which `ulimit -v` reproduces
// here (qemu-user, the other limit, is covered by the smoke test of each binary in CI).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { largestFitting, MAX_AUTO_MAP_SIZE_GB } from "../src/lmdb/map-size.ts";
import { newKey, RawClient, signed, tempDir } from "./harness.ts";
import { spawnCli, until } from "./procs.ts";

const GiB = 2 ** 30;
/** A 39-bit user address space, in KiB as `ulimit -v` takes it. */
const USER_SPACE_39_BIT_KIB = 512 * 2 ** 20;

describe("largestFitting", () => {
  test("takes the largest power of two that fits, at most MAX_AUTO_MAP_SIZE_GB", () => {
    expect(largestFitting((gb) => gb * 3 <= 500)).toBe(128);
    expect(largestFitting(() => true)).toBe(MAX_AUTO_MAP_SIZE_GB);
    expect(largestFitting((gb) => gb <= 1)).toBe(1);
    expect(largestFitting(() => false)).toBeUndefined();
  });
});

/**
 * `relay serve` from source under `ulimit -v` (a shell sets it and executes the relay, so the
 * limit is in place before the relay starts).
 */
function serveLimited(kib: number | "unlimited", args: string[]) {
  const dir = tempDir();
  const s = spawnCli(["serve", "--port", "0", "--data", join(dir, "data"), ...args], {
    via: ["/bin/sh", "-c", `ulimit -v ${kib} && exec "$@"`, "sh"],
  });
  return { proc: s.proc, dir, out: s.stdout, err: s.stderr, exited: s.exited };
}

/** The sizes of this process's maps of `file`, in GiB. */
function mapsOf(pid: number, file: string): number[] {
  return readFileSync(`/proc/${pid}/maps`, "utf8")
    .split("\n")
    .filter((l) => l.endsWith(` ${file}`))
    .map((l) => {
      const [from, to] = l
        .split(" ")[0]!
        .split("-")
        .map((h) => Number.parseInt(h, 16));
      return (to! - from!) / GiB;
    });
}

async function servesAnEvent(url: string): Promise<void> {
  const c = await RawClient.connect(url);
  const e = signed(newKey(), { content: "kept in a limited address space" });
  expect((await c.publish(e))[2]).toBe(true);
  expect(await c.req("q", { ids: [e.id] })).toEqual([e.id]);
  c.close();
}

describe.skipIf(process.platform !== "linux")("the map size under a limited address space", () => {
  test("in 512 GiB of address space (a 39-bit kernel) the default maps 128 GiB per environment, says so, and serves", async () => {
    const r = serveLimited(USER_SPACE_39_BIT_KIB, []);
    await until(
      "the start-up line",
      () => r.out().includes("relay listening on") || r.proc.signalCode !== null || r.proc.exitCode !== null,
    );
    const line = r.out().split("\n")[0]!;
    expect(/mapSize="([^"]*)"/.exec(line)?.[1]).toBe(
      "128 GiB per environment (sized from the address space: 3 maps of 256 GiB did not fit)",
    );
    const data = join(r.dir, "data");
    expect(mapsOf(r.proc.pid, join(data, "data.mdb"))).toEqual([128]);
    // The derived indexes are written through a writable map, which starts at twice what their
    // file holds (64 MiB at least) and doubles as they grow (store.ts writeMapSize).
    expect(mapsOf(r.proc.pid, join(data, "derived", "data.mdb"))).toEqual([1 / 16]);
    await servesAnEvent(/listening on (ws:\/\/\S+)/.exec(line)![1]!);
    r.proc.kill("SIGTERM");
    expect(await r.exited()).toBe(0);
  });

  test("a configured size the address space cannot hold is refused at start with the reason, not a crash", async () => {
    const r = serveLimited(USER_SPACE_39_BIT_KIB, ["--store.mapSizeGb", "1024"]);
    expect(await r.exited()).toBe(1);
    expect(r.err()).toBe(
      "relay: store.mapSizeGb 1024: this machine cannot map two environments of 1024 GiB " +
        "(128 GiB each would fit: the address space is limited, by ulimit -v, a 39-bit kernel or an emulator); " +
        "lower it, or set 0 to size it from what the machine offers\n",
    );
    expect(r.out()).toBe("");
  });

  // x86-64 user space is 128 TiB or more on every kernel: the default is the most it takes.
  test.skipIf(process.arch !== "x64")(
    "with no limit on x86-64 the default maps 1 TiB per environment",
    async () => {
      const r = serveLimited("unlimited", []);
      await until(
        "the start-up line",
        () =>
          r.out().includes("relay listening on") || r.proc.signalCode !== null || r.proc.exitCode !== null,
      );
      const line = r.out().split("\n")[0]!;
      expect(/mapSize="([^"]*)"/.exec(line)?.[1]).toBe(
        "1024 GiB per environment (sized from the address space: the most it takes)",
      );
      expect(mapsOf(r.proc.pid, join(r.dir, "data", "data.mdb"))).toEqual([1024]);
      r.proc.kill("SIGTERM");
      expect(await r.exited()).toBe(0);
    },
  );
});
