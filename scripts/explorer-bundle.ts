// Builds the explorer's client (src/explorer/client/app.ts) into src/explorer/bundle.js:
// `bun scripts/explorer-bundle.ts`. The bundle is committed, so the server embeds it with a text
// import and `bun build --compile` needs no browser build step; test/explorer/http.test.ts fails
// when the committed file differs from a fresh build.
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
export const BUNDLE_PATH = join(ROOT, "src", "explorer", "bundle.js");

export async function buildExplorerBundle(): Promise<string> {
  const result = await Bun.build({
    entrypoints: [join(ROOT, "src", "explorer", "client", "app.ts")],
    target: "browser",
    format: "esm",
    minify: true,
    banner: "// Generated from src/explorer/client/ by `bun scripts/explorer-bundle.ts`; do not edit.",
  });
  if (!result.success) throw new AggregateError(result.logs, "explorer bundle failed");
  const [out] = result.outputs;
  if (!out || result.outputs.length !== 1) throw new Error("explorer bundle: expected one output file");
  return out.text();
}

if (import.meta.main) {
  const text = await buildExplorerBundle();
  writeFileSync(BUNDLE_PATH, text);
  console.log(`wrote src/explorer/bundle.js: ${text.length} bytes, ${Bun.gzipSync(text).length} gzipped`);
}
