// A NIP-50 `search` string → the words every result must contain plus the extensions applied.
//
// A whitespace-separated term shaped `key:value` (a key of letters, digits, `_` or `-` starting
// with a letter, and a non-empty value) is an extension and never a word. URLs are not
// extensions: they go to the tokenizer, which keeps their host. Extensions:
//   language:<code>  applied: results must carry a NIP-32 ISO-639-1 label with that code
//                    (see fields.ts); several language: terms accept any of them
//   include:spam     ignored: this relay does no spam filtering, so nothing is held back anyway
//   domain:<domain>  ignored: NIP-05 addresses are not verified here
//   sentiment:<x>    ignored: no sentiment analysis
//   nsfw:<bool>      ignored: content warnings are not classified
//   anything else    ignored (NIP-50: relays SHOULD ignore extensions they don't support),
//                    including `nostr:` entities, which the tokenizer would drop anyway
// A query left with no words matches nothing.
import { languageCode } from "./fields.ts";
import { tokenize } from "./tokenize.ts";

export interface SearchQuery {
  /** distinct query tokens, all of which must be present */
  words: string[];
  /** accepted language codes; empty means any */
  languages: string[];
  /** extension keys that were recognised but not applied, for diagnostics */
  ignored: string[];
}

const EXTENSION = /^([a-z][a-z0-9_-]*):(\S+)$/i;
const URLISH = /^(?:[a-z][a-z0-9+.-]*:\/\/|www\.)/i;

export function parseSearch(search: string): SearchQuery {
  const text: string[] = [];
  const languages: string[] = [];
  const ignored: string[] = [];
  for (const term of search.split(/\s+/)) {
    if (term === "") continue;
    const m = URLISH.test(term) ? null : EXTENSION.exec(term);
    if (!m) {
      text.push(term);
      continue;
    }
    const key = m[1]!.toLowerCase();
    if (key === "language") languages.push(languageCode(m[2]!));
    else ignored.push(key);
  }
  const words = [...new Set(tokenize(text.join(" ")))];
  return { words, languages: [...new Set(languages)], ignored };
}
