// The copy of libsecp256k1 a compiled binary carries: none when running from source. The build
// (scripts/secp256k1-plugin.ts) replaces this module with one that embeds a library of the
// target's architecture (Debian's package) as a file of the executable, so a downloaded binary
// verifies natively on a host that has no libsecp256k1. It is the last candidate: a library the
// host provides comes first.

/** Where the embedded library can be opened from (a path inside the binary), if there is one. */
export const embeddedLibrary: string | undefined = undefined;
/** Where it was taken from (file and package), for the start-up line and `relay --version`. */
export const embeddedFrom: string | undefined = undefined;
