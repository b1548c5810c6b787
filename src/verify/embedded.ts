// The copy of libsecp256k1 a compiled binary carries: none when running from source. The build
// (scripts/secp256k1-plugin.ts) replaces this module with one that embeds the build machine's
// library as a file of the executable, so a downloaded binary verifies natively on a host that
// has no libsecp256k1. It is the last candidate: a library the host provides comes first.

/** Where the embedded library can be opened from (a path inside the binary), if there is one. */
export const embeddedLibrary: string | undefined = undefined;
/** The file it was taken from on the build machine, for the start-up line. */
export const embeddedFrom: string | undefined = undefined;
