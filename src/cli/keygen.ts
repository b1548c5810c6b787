// `relay keygen`: a key pair for a relay operator (NIP-11 pubkey, admin keys, test clients),
// either fresh or derived from a BIP-39 mnemonic along NIP-06's path m/44'/1237'/<account>'/0/0.
import { bytesToHex } from "@noble/hashes/utils.js";
import { accountFromSeedWords, generateSeedWords, validateWords } from "nostr-tools/nip06";
import { npubEncode, nsecEncode } from "nostr-tools/nip19";
import { generateSecretKey, getPublicKey } from "nostr-tools/pure";
import { parseArgs, UsageError } from "./args.ts";
import { guarded } from "./output.ts";

export const help = `relay keygen [--mnemonic [WORDS]] [--account N] [--passphrase P] [--json]

Without options, prints a new random key pair. With --mnemonic alone, makes a new 12-word
BIP-39 mnemonic and derives the key from it; with --mnemonic WORDS (one quoted argument or
the words one after another), derives from those words. Derivation follows NIP-06:
m/44'/1237'/<account>'/0/0, account 0 unless --account is given, with the optional BIP-39
--passphrase (note that arguments are visible to other local users in the process list).

Prints 'secret', 'pubkey' (both hex), 'nsec', 'npub' and, when used, 'mnemonic', one
'name: value' per line; --json prints the same as one JSON object. Bad input exits with 2.`;

/** Bad input from the user: reported as one line on stderr with exit status 2. */

interface Keys {
  secret: string;
  pubkey: string;
  nsec: string;
  npub: string;
  mnemonic?: string;
}

export function run(argv: string[]): Promise<number> {
  return guarded("keygen", async () => {
    const { keys, json } = keygen(argv);
    if (json) console.log(JSON.stringify(keys));
    else
      console.log(
        Object.entries(keys)
          .map(([name, value]) => `${name}: ${value}`)
          .join("\n"),
      );
    return 0;
  });
}

function keygen(argv: string[]): { keys: Keys; json: boolean } {
  const { words, rest } = takeMnemonic(argv);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(rest, ["json"]);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { positional, flags } = parsed;
  const { json, account, passphrase, ...unknown } = flags;
  const stray = [...Object.keys(unknown).map((f) => `--${f}`), ...positional];
  if (stray.length > 0) throw new UsageError(`unexpected argument ${stray[0]}`);
  if (words === undefined) {
    // Account and passphrase only mean something on the way from a mnemonic to a key.
    if (account !== undefined) throw new UsageError("--account needs --mnemonic");
    if (passphrase !== undefined) throw new UsageError("--passphrase needs --mnemonic");
    const secret = generateSecretKey();
    return { keys: describe(secret, getPublicKey(secret)), json: json !== undefined };
  }
  const mnemonic = words === "" ? generateSeedWords() : checkedMnemonic(words);
  const { privateKey, publicKey } = accountFromSeedWords(mnemonic, passphrase ?? "", accountIndex(account));
  return { keys: { ...describe(privateKey, publicKey), mnemonic }, json: json !== undefined };
}

function describe(secret: Uint8Array, pubkey: string): Keys {
  return { secret: bytesToHex(secret), pubkey, nsec: nsecEncode(secret), npub: npubEncode(pubkey) };
}

// The English list is all lower case, and BIP-39 splits on single spaces, so pasted words with
// capitals, tabs or line breaks are normalised here instead of being refused or (worse) hashed
// into a different seed by a looser reader.
function checkedMnemonic(words: string): string {
  const mnemonic = words.trim().toLowerCase().split(/\s+/).join(" ");
  const count = mnemonic.split(" ").length;
  if (![12, 15, 18, 21, 24].includes(count)) {
    throw new UsageError(`invalid mnemonic: ${count} words; BIP-39 uses 12, 15, 18, 21 or 24`);
  }
  // Derivation itself would accept any words, so validation is the only guard against typos.
  if (!validateWords(mnemonic)) {
    throw new UsageError(
      "invalid mnemonic: a word is not in the BIP-39 English list or the checksum is wrong",
    );
  }
  return mnemonic;
}

function accountIndex(value: string | undefined): number {
  if (value === undefined) return 0;
  // The account level is hardened, so the index must fit below 2^31.
  if (!/^\d+$/.test(value) || Number(value) >= 2 ** 31) {
    throw new UsageError(`--account must be an integer from 0 to 2147483647, got '${value}'`);
  }
  return Number(value);
}

/**
 * `--mnemonic` takes zero or more words, which parseArgs cannot express: it is pulled out here.
 * words is undefined without the flag, "" with the flag alone.
 */
function takeMnemonic(argv: string[]): { words: string | undefined; rest: string[] } {
  let words: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a !== "--mnemonic" && !a.startsWith("--mnemonic=")) {
      rest.push(a);
      continue;
    }
    if (words !== undefined) throw new UsageError("--mnemonic given twice");
    if (a.startsWith("--mnemonic=")) {
      words = a.slice("--mnemonic=".length);
      if (words.trim() === "")
        throw new UsageError("--mnemonic= needs words; use --mnemonic alone for new ones");
      continue;
    }
    const taken: string[] = [];
    while (i + 1 < argv.length && !argv[i + 1]!.startsWith("--")) taken.push(argv[++i]!);
    words = taken.join(" ");
    // An empty quoted argument (say, an unset "$WORDS") must not quietly mean "new words".
    if (taken.length > 0 && words.trim() === "") throw new UsageError("--mnemonic was given empty words");
  }
  return { words, rest };
}
