// NIP-05: /.well-known/nostr.json?name=<local part> answered from the configured names, with the
// relay hints configured for the matching pubkey.
import type { Config } from "../config/schema.ts";

export function nip05Document(c: Config, name: string | null): Record<string, unknown> {
  const names = c["nip05.names"];
  const relaysOf = c["nip05.relays"];
  const picked =
    name === null
      ? Object.entries(names)
      : Object.entries(names).filter(([n]) => n.toLowerCase() === name.toLowerCase());
  const out: Record<string, unknown> = { names: Object.fromEntries(picked) };
  const relays = Object.fromEntries(picked.flatMap(([, pk]) => (relaysOf[pk] ? [[pk, relaysOf[pk]]] : [])));
  if (Object.keys(relays).length > 0) out.relays = relays;
  return out;
}
