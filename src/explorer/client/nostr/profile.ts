// Kind-0 profiles (NIP-01 metadata): the string fields of the content and the name to show.

export interface Profile {
  name?: string;
  display_name?: string;
  about?: string;
  picture?: string;
  nip05?: string;
  website?: string;
  banner?: string;
  lud16?: string;
}

/** Kind-0 content, keeping string fields only. */
export function parseProfile(content: string): Profile {
  try {
    const raw = JSON.parse(content) as Record<string, unknown>;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(raw ?? {})) if (typeof v === "string") out[k] = v;
    return out as Profile;
  } catch {
    return {};
  }
}

export const displayName = (p: Profile | undefined | null): string =>
  (p?.display_name || p?.name || "").trim().slice(0, 80);
