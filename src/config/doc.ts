// The operator's reference for every setting, generated from the schema so it cannot drift.
import { entries, envNames } from "./schema.ts";

export function configDoc(): string {
  const rows = entries().map(([k, e]) => {
    const flag = e.flag && e.flag !== k ? `\`--${e.flag}\`, \`--${k}\`` : `\`--${k}\``;
    const env = envNames(k)
      .map((n) => `\`${n}\``)
      .join(", ");
    return `| \`${k}\` | ${e.type} | \`${JSON.stringify(e.default)}\` | ${e.live ? "yes" : "restart"} | ${flag} | ${env} | ${e.doc} |`;
  });
  return `# Configuration

Generated from \`src/config/schema.ts\` by \`bun scripts/config-doc.ts\`; do not edit by hand.

Settings are read from the defaults, then the TOML file given with \`--config FILE\` (dotted keys
are TOML tables: \`limits.maxLimit\` is \`maxLimit\` under \`[limits]\`), then environment
variables, then command-line flags; later sources win. \`relay config --print-default\` prints a
commented sample file. "Live" settings may change on reload; the others need a restart.

| key | type | default | live | flag | environment | meaning |
| --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}
`;
}
