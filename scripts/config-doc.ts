// Writes docs/configuration.md from the configuration schema (`bun scripts/config-doc.ts`).
// src/config/config.test.ts fails when the committed file drifts from the schema.
import { writeFileSync } from "node:fs";
import { configDoc } from "../src/config/doc.ts";

writeFileSync(new URL("../docs/configuration.md", import.meta.url), configDoc());
