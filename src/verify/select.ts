// Picks the Schnorr backend at start-up from configuration and what the host provides, and says
// why, so the start-up log explains a relay that runs noticeably slower than expected.
import { probeNativeBackend } from "./native.ts";
import { nobleBackend, type SchnorrBackend } from "./verify.ts";

export type BackendPreference = "auto" | "native" | "noble";

export interface BackendChoice {
  backend: SchnorrBackend;
  /** One line for the start-up log. */
  reason: string;
  /** Library file that loaded (native only); worker threads reuse it so every thread runs the same code. */
  path?: string;
}

/**
 * "noble" always succeeds; "auto" prefers libsecp256k1 and falls back to noble; "native" throws
 * when libsecp256k1 cannot be used, because an operator who asked for it explicitly should not
 * get a several-times-slower relay silently.
 */
export function chooseBackend(preference: BackendPreference, path?: string): BackendChoice {
  if (preference === "noble")
    return { backend: nobleBackend, reason: "signature backend noble (configured)" };
  const probe = probeNativeBackend(path);
  if (probe.backend) {
    const skipped = probe.errors.length > 0 ? `; skipped ${probe.errors.join("; ")}` : "";
    return {
      backend: probe.backend,
      reason: `signature backend libsecp256k1 from ${probe.label} (${preference})${skipped}`,
      path: probe.path,
    };
  }
  const why = probe.errors.join("; ");
  if (preference === "native") throw new Error(`signature backend "native" requested but unusable: ${why}`);
  return {
    backend: nobleBackend,
    reason:
      `signature backend noble (auto; libsecp256k1 unusable: ${why}): signatures are checked with ` +
      "@noble/curves at about an eighth of libsecp256k1's speed; install the library for full speed " +
      "(apt-get install libsecp256k1-1 on Debian or Ubuntu, brew install secp256k1 on macOS)",
  };
}
