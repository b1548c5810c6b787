// `relay stream` as a real process between two of our relays: new events cross both ways, none
// is sent back to where it came from, and a remote that goes away and comes back (same port,
// same data) is reconnected and resubscribed without losing what was published meanwhile.
import { describe, expect, test } from "bun:test";
import type { TestRelay } from "./harness.ts";
import { newKey, RawClient, signed, startTestRelay, tempDir } from "./harness.ts";
import { spawnCli } from "./procs.ts";

/** Lines a child writes, as they come. */
class Lines {
  readonly lines: string[] = [];
  private rest = "";
  add(text: string): void {
    const parts = (this.rest + text).split("\n");
    this.rest = parts.pop()!;
    this.lines.push(...parts);
  }
  async waitFor(pred: (l: string) => boolean, what: string, ms = 30_000): Promise<string> {
    const end = Date.now() + ms;
    for (;;) {
      const hit = this.lines.find(pred);
      if (hit !== undefined) return hit;
      if (Date.now() > end)
        throw new Error(`timed out waiting for ${what}; lines: ${this.lines.join(" | ")}`);
      await Bun.sleep(50);
    }
  }
}

async function until(cond: () => Promise<boolean> | boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

async function has(r: TestRelay, id: string): Promise<boolean> {
  const c = await RawClient.connect(r.url);
  try {
    return (await c.req("q", { ids: [id] })).includes(id);
  } finally {
    c.close();
  }
}

function stream(args: string[]) {
  const out = new Lines();
  const err = new Lines();
  const s = spawnCli(["stream", ...args], { onStdout: (t) => out.add(t), onStderr: (t) => err.add(t) });
  return { p: s.proc, exited: s.exited, out, err };
}

const eventsIn = (r: TestRelay) => r.ctx.counters.framesIn.EVENT ?? 0;

describe("relay stream", () => {
  test("mirrors live events both ways with no loop, and survives the remote restarting", async () => {
    const local = startTestRelay();
    const remoteDir = tempDir("relay-stream-");
    let remote = startTestRelay({}, remoteDir);
    const port = new URL(remote.url).port;
    const s = stream([remote.url, "--local", local.url, "--dir", "both"]);
    await s.err.waitFor((l) => l.includes("remote ") && l.endsWith(": connected"), "the remote connected");
    await s.err.waitFor((l) => l.includes("local ") && l.endsWith(": connected"), "the local side connected");

    const sk = newKey();
    const toLocal = await RawClient.connect(local.url);
    const toRemote = await RawClient.connect(remote.url);
    const e1 = signed(sk, { content: "published here, mirrored up" });
    expect((await toLocal.publish(e1))[2]).toBe(true);
    await until(() => has(remote, e1.id), "e1 on the remote");
    const e2 = signed(sk, { content: "published there, mirrored down" });
    expect((await toRemote.publish(e2))[2]).toBe(true);
    await until(() => has(local, e2.id), "e2 here");
    await s.out.waitFor((l) => l === `up ${e1.id} ok`, "e1's OK");
    await s.out.waitFor((l) => l === `down ${e2.id} ok`, "e2's OK");
    toRemote.close();

    // The remote goes away; what is published here meanwhile crosses once it is back.
    await remote.stop();
    await s.err.waitFor((l) => l.includes("remote ") && l.includes("retrying in"), "the drop noticed");
    const e3 = signed(sk, { content: "published while the remote was down" });
    expect((await toLocal.publish(e3))[2]).toBe(true);
    remote = startTestRelay({ port }, remoteDir);
    await until(() => has(remote, e3.id), "e3 on the restarted remote", 90_000);
    const again = await RawClient.connect(remote.url);
    const e4 = signed(sk, { content: "published there after the restart" });
    expect((await again.publish(e4))[2]).toBe(true);
    await until(() => has(local, e4.id), "e4 here");
    await s.out.waitFor((l) => l === `down ${e4.id} ok`, "e4's OK");
    again.close();
    toLocal.close();

    s.p.kill("SIGTERM");
    expect(await s.exited()).toBe(0);
    // Each event crossed once, in its direction, and nothing came back.
    const crossed = s.out.lines.filter((l) => l !== "").sort();
    expect(crossed).toEqual(
      [`up ${e1.id} ok`, `down ${e2.id} ok`, `up ${e3.id} ok`, `down ${e4.id} ok`].sort(),
    );
    await until(() => local.ctx.conns.size === 0 && remote.ctx.conns.size === 0, "connections closed");
    // Here: e1 and e3 from their publisher, e2 and e4 from the mirror; there (since the
    // restart): e4 from its publisher, e3 from the mirror. An echo would add one more.
    expect(eventsIn(local)).toBe(4);
    expect(eventsIn(remote)).toBe(2);
  }, 180_000);

  test("every event arriving while the stream runs crosses, dated before its start or not, both ways and filtered", async () => {
    const local = startTestRelay();
    const remote = startTestRelay();
    // Kinds 1 and 7 published; only kind 1 is mirrored.
    const s = stream([remote.url, "--local", local.url, "--dir", "both", "--filter", '{"kinds":[1]}']);
    await s.err.waitFor((l) => l.includes("local ") && l.endsWith(": connected"), "the local side connected");
    await s.err.waitFor((l) => l.includes("remote ") && l.endsWith(": connected"), "the remote connected");
    const sk = newKey();
    const t0 = Math.floor(Date.now() / 1000);
    // Signed up to six seconds before they are sent, as clients that sign first and send later do.
    const make = (where: string, n: number) =>
      Array.from({ length: n }, (_, i) =>
        signed(sk, { kind: i % 4 === 3 ? 7 : 1, content: `${where} ${i}`, created_at: t0 - (i % 7) }),
      );
    const down = make("published there", 100);
    const up = make("published here", 100);
    const there = await RawClient.connect(remote.url);
    const here = await RawClient.connect(local.url);
    for (const e of down) expect((await there.publish(e))[2]).toBe(true);
    for (const e of up) expect((await here.publish(e))[2]).toBe(true);
    const notes = <E extends { kind: number }>(l: E[]) => l.filter((e) => e.kind === 1);
    const want = [
      ...notes(down).map((e) => `down ${e.id} ok`),
      ...notes(up).map((e) => `up ${e.id} ok`),
    ].sort();
    await until(() => s.out.lines.filter((l) => l !== "").length >= want.length, "every note crossed");
    await Bun.sleep(300);
    s.p.kill("SIGTERM");
    expect(await s.exited()).toBe(0);
    expect(s.out.lines.filter((l) => l !== "").sort()).toEqual(want);
    const kinds = async (r: TestRelay) => {
      const c = await RawClient.connect(r.url);
      try {
        return (await c.req("all", { limit: 1000 })).length;
      } finally {
        c.close();
      }
    };
    // Each side: its own 100, and the other's 75 notes.
    expect(await kinds(local)).toBe(175);
    expect(await kinds(remote)).toBe(175);
    here.close();
    there.close();
  }, 60_000);

  test("--dir down mirrors nothing up", async () => {
    const local = startTestRelay();
    const remote = startTestRelay();
    const s = stream([remote.url, "--local", local.url, "--dir", "down"]);
    await s.err.waitFor((l) => l.includes("local ") && l.endsWith(": connected"), "the local side connected");
    await s.err.waitFor((l) => l.includes("remote ") && l.endsWith(": connected"), "the remote connected");
    const sk = newKey();
    const here = await RawClient.connect(local.url);
    const there = await RawClient.connect(remote.url);
    const mine = signed(sk, { content: "stays here" });
    expect((await here.publish(mine))[2]).toBe(true);
    const theirs = signed(sk, { content: "comes down" });
    expect((await there.publish(theirs))[2]).toBe(true);
    await s.out.waitFor((l) => l === `down ${theirs.id} ok`, "the down event's OK");
    s.p.kill("SIGTERM");
    expect(await s.exited()).toBe(0);
    expect(s.out.lines.filter((l) => l !== "")).toEqual([`down ${theirs.id} ok`]);
    // The mirror subscribed only to the remote: here it sent one EVENT and asked for nothing.
    expect(local.ctx.counters.framesIn.REQ ?? 0).toBe(0);
    here.close();
    there.close();
  }, 60_000);
});
