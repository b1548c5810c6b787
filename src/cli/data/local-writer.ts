// Writing events into a data directory from a command (`relay import`, `relay sync`; `relay
// stream` writes through a running relay instead): the store opened with what the server derives from it, the server's own Writer
// (duplicates, replaceable rules, NIP-09 deletions, NIP-62), the checks a live EVENT gets
// (`admit`, with the past limit lifted: archives are old), and an orderly close. One path, so
// whatever makes it safe beside a running relay applies to every command that writes.

import type { Config } from "../../config/schema.ts";
import { admit } from "../../ingest/event.ts";
import { Moderation } from "../../manage/moderation.ts";
import type { NostrEvent } from "../../nostr/event.ts";
import { ownUrlCheck } from "../../nostr/relay-url.ts";
import type { Store } from "../../store/types.ts";
import { Writer } from "../../store/writer.ts";
import { chooseBackend } from "../../verify/select.ts";
import type { Reject } from "../../wire/reasons.ts";
import { openForWrite } from "./open-store.ts";

export interface LocalWriter {
  store: Store;
  writer: Writer;
  /** the checks of a live EVENT (shape, limits, id, signature unless noVerify) */
  check(raw: unknown, noVerify?: boolean): NostrEvent | Reject;
  /** commits what was handed over, brings the derived indexes up to it, closes the store */
  close(): Promise<void>;
}

/**
 * `command` names the command in the data directory's lock (a relay serving the directory keeps
 * its derived indexes up to date; with none, this process does).
 */
export function openLocalWriter(config: Config, command: string, mustExist = false): LocalWriter {
  const { store, consumers, finish, close } = openForWrite(config, mustExist, command);
  // Its commits feed the derived indexes, which apply them in batches as the server's do; NIP-62
  // requests naming this relay (its listening address or publicUrl) are honoured, and the bans
  // made through NIP-86 refuse what they name, as the relay does.
  const moderation = new Moderation(store);
  const writer = new Writer(
    store,
    {
      maxBatch: config["writer.maxBatch"],
      isOwnUrl: ownUrlCheck(config.host, config.port, () => config.publicUrl),
      refuse: (e) => moderation.banned(e),
      backlog: () => consumers.runner.backlog(),
    },
    (stored, removed, high) => consumers.runner.committed(stored, removed, high),
  );
  // libsecp256k1 when present (about 8x faster than noble), as the server chooses it.
  const { backend } = chooseBackend(config["verify.backend"], config["verify.libraryPath"] || undefined);
  const checks = { config: { ...config, "limits.createdAtPastSeconds": 0 }, verifier: backend };
  return {
    store,
    writer,
    check: (raw, noVerify = false) => admit(checks, raw, Date.now() / 1000, { noVerify }),
    async close() {
      try {
        await writer.drain();
        await consumers.runner.stop();
        finish();
      } finally {
        await close();
      }
    },
  };
}
