#!/usr/bin/env bun
// The one entry point: `relay [command] [options]`. Each command is a file in src/cli/: data/ for
// those that work on a data directory, net/ for those that talk to relays, the rest beside them.
import pkg from "../package.json" with { type: "json" };
import { ConfigError } from "./config/load.ts";
import { guardCommitRejections } from "./lmdb/full.ts";

interface Command {
  help: string;
  run(argv: string[]): Promise<number>;
}

const COMMANDS: Record<string, { about: string; load: () => Promise<Command> }> = {
  serve: { about: "run the relay (default)", load: () => import("./cli/serve.ts") },
  upgrade: {
    about: "replace the running relay by its new binary, dropping no client",
    load: () => import("./cli/upgrade.ts"),
  },
  config: { about: "print the documented default configuration", load: () => import("./cli/config.ts") },
  keygen: { about: "make a key pair, random or from a mnemonic", load: () => import("./cli/keygen.ts") },
  nip19: { about: "encode and decode npub, nprofile, naddr, ...", load: () => import("./cli/nip19.ts") },
  import: { about: "load JSONL events (strfry/nostream export)", load: () => import("./cli/data/import.ts") },
  export: { about: "write stored events as JSONL, oldest first", load: () => import("./cli/data/export.ts") },
  stats: { about: "event counts by kind, database sizes", load: () => import("./cli/data/stats.ts") },
  compact: { about: "write a compacted copy of the data", load: () => import("./cli/data/compact.ts") },
  backup: {
    about: "write a consistent copy of the data while serving",
    load: () => import("./cli/data/backup.ts"),
  },
  check: {
    about: "verify (and --repair) events against their indexes",
    load: () => import("./cli/data/check.ts"),
  },
  delete: { about: "remove stored events matching a filter", load: () => import("./cli/data/delete.ts") },
  prune: {
    about: "remove what the retention rules and the disk budget make due",
    load: () => import("./cli/data/prune.ts"),
  },
  reindex: {
    about:
      "rebuild the derived indexes (REQ indexes, search, NIP-45 counts, API counters) from stored events",
    load: () => import("./cli/data/reindex.ts"),
  },
  sync: { about: "reconcile with any relay by negentropy (NIP-77)", load: () => import("./cli/net/sync.ts") },
  stream: {
    about: "mirror new events live to and from another relay",
    load: () => import("./cli/net/stream.ts"),
  },
  req: { about: "query any relay: one REQ, events as JSONL", load: () => import("./cli/net/req.ts") },
  publish: { about: "sign and send an event to any relay", load: () => import("./cli/net/publish.ts") },
  admin: { about: "call a relay's NIP-86 management API", load: () => import("./cli/net/admin.ts") },
  doctor: {
    about: "diagnose a relay: DNS, TCP, TLS, NIP-11, REQ",
    load: () => import("./cli/net/doctor.ts"),
  },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.about}`);
  return `relay ${pkg.version}: a Nostr relay on Bun and LMDB

usage: relay [command] [options]

commands:
${lines.join("\n")}

'relay <command> --help' tells more.`;
}

async function main(argv: string[]): Promise<number> {
  const first = argv[0];
  if (first === "--version" || first === "-v") {
    console.log((await import("./cli/version.ts")).versionText());
    return 0;
  }
  if (first === "--help" || first === "-h" || first === "help") {
    console.log(usage());
    return 0;
  }
  const named = first !== undefined && !first.startsWith("-");
  const name = named ? first : "serve";
  const entry = COMMANDS[name];
  if (!entry) {
    console.error(`relay: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  const cmd = await entry.load();
  const rest = named ? argv.slice(1) : argv;
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(cmd.help);
    return 0;
  }
  return cmd.run(rest);
}

guardCommitRejections();
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    const msg = e instanceof ConfigError ? `configuration error: ${e.message}` : (e as Error).message;
    console.error(`relay: ${msg}`);
    process.exit(e instanceof ConfigError ? 78 : 1);
  },
);
