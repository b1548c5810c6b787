import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopWhenQueueEmpty } from "../../src/server/accept-queue.ts";

// Connections the kernel queued while the event loop was blocked are accepted before the
// listener closes (closed at once, the kernel would reset them).
test.skipIf(process.platform !== "linux")(
  "the listener closes only once its accept queue is empty",
  async () => {
    let opened = 0;
    const l = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open() {
          opened++;
        },
        data() {},
      },
    });
    // Blocks this thread while five clients connect and hold their connections for a while.
    Bun.spawnSync(
      [
        "bash",
        "-c",
        `for i in 1 2 3 4 5; do (exec 3<>/dev/tcp/127.0.0.1/${l.port}; sleep 2) & done; sleep 0.3`,
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    expect(opened).toBe(0);
    await stopWhenQueueEmpty(l.port, () => l.stop(false));
    expect(opened).toBe(5);
  },
);

// Bun's stop also closes connections whose request it has not read yet: those get their answer.
test.skipIf(process.platform !== "linux")("requests that arrived before the close are answered", async () => {
  const dir = mkdtempSync(join(tmpdir(), "accept-queue-"));
  try {
    const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok") });
    const port = s.port!;
    Bun.spawnSync(
      [
        "bash",
        "-c",
        `for i in 1 2 3 4 5; do (exec 3<>/dev/tcp/127.0.0.1/${port}; printf 'GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' >&3; head -c 15 <&3 > ${dir}/$i) & done; sleep 0.3`,
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    await stopWhenQueueEmpty(port, () => void s.stop(false));
    await Bun.sleep(300);
    const answers = [1, 2, 3, 4, 5].map((i) => readFileSync(join(dir, String(i)), "utf8"));
    expect(answers).toEqual(Array(5).fill("HTTP/1.1 200 OK"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
