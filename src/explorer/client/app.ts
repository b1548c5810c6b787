// The explorer page: the relay's address, live figures and NIP-11 document, a NIP-19 decoder,
// and hash routes to the views in pages/. Talks only to this relay: its WebSocket, /v0/stats and
// the JSON API (relay/api.ts). Bundled into src/explorer/bundle.js by scripts/explorer-bundle.ts.

import {
  type Decoded,
  decodeEntity,
  eventIdOf,
  npub,
  nrelayEncode,
  pubkeyOf,
  relayHref,
  routeOf,
} from "./nostr/entities.ts";
import { home, notFound, profile, search, trending } from "./pages/lists.ts";
import type { Dispose, Shell } from "./pages/shell.ts";
import { thread } from "./pages/thread.ts";
import { RelaySocket } from "./relay/socket.ts";
import { copyButton, fill, h, link } from "./render/dom.ts";
import { Names } from "./render/views.ts";

const $ = <T extends HTMLElement = HTMLElement>(sel: string): T => document.querySelector<T>(sel)!;

const info = JSON.parse(
  document.querySelector<HTMLMetaElement>('meta[name="relay-info"]')?.content || "{}",
) as Record<string, unknown>;
const relayName = typeof info.name === "string" ? info.name : "relay";
// The relay answers WebSocket upgrades on the page's own address.
const path = location.pathname === "/" ? "" : location.pathname;
const wsUrl = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${path}`;
const socket = new RelaySocket(wsUrl);
const names = new Names(socket);
names.images = localStorage.getItem("explorer.images") === "1";
const maxLimit = (info.limitation as Record<string, unknown> | undefined)?.max_limit;
const shell: Shell = {
  socket,
  names,
  wsUrl,
  // NIP-01 leaves the largest limit to the relay; 500 is what most relays take.
  maxLimit: typeof maxLimit === "number" && maxLimit > 0 ? maxLimit : 500,
  view: $("#view"),
  setTitle: (t) => {
    document.title = t ? `${t} · ${relayName}` : relayName;
  },
};

// --- the relay: address, live figures, NIP-11 ----------------------------------------------------

function renderAddress(): void {
  const ws = h("code", { id: "ws-url" }, wsUrl);
  const nrelay = nrelayEncode(wsUrl);
  const nr = h("code", { id: "nrelay", title: nrelay }, nrelay);
  const status = h("span", { class: "dot", title: "connecting" });
  socket.onStatus = (s) => {
    status.className = `dot ${s}`;
    status.title = s;
    if (s === "open") void pollStats();
  };
  fill(
    $("#address"),
    h(
      "div",
      { class: "copyline" },
      status,
      ws,
      copyButton(() => wsUrl, ws),
    ),
    h(
      "div",
      { class: "copyline" },
      nr,
      copyButton(() => nrelay, nr),
    ),
  );
}

async function pollStats(): Promise<void> {
  if (document.hidden) return;
  try {
    const r = await fetch("/v0/stats", { cache: "no-store" });
    if (!r.ok) return;
    const s = (await r.json()) as Record<string, unknown>;
    for (const [id, key, digits] of [
      ["stat-events", "events", 0],
      ["stat-connections", "connections", 0],
      ["stat-rate", "events_per_second", 1],
    ] as const) {
      const v = s[key];
      if (typeof v === "number")
        $(`#${id}`).textContent = v.toLocaleString(undefined, { maximumFractionDigits: digits });
    }
  } catch {
    // the relay is restarting; the next poll tries again
  }
}

function renderStats(): void {
  const stat = (label: string, id: string) => [h("dt", null, label), h("dd", { id }, "–")];
  fill(
    $("#stats"),
    ...stat("events stored", "stat-events"),
    ...stat("connections", "stat-connections"),
    ...stat("events/s", "stat-rate"),
  );
  void pollStats();
  setInterval(pollStats, 5000);
  document.addEventListener("visibilitychange", () => void pollStats());
}

function renderInfo(): void {
  const str = (k: string) => (typeof info[k] === "string" ? (info[k] as string) : "");
  const dl = h("dl", { class: "facts" });
  const fact = (k: string, v: Node | string) => dl.append(h("dt", null, k), h("dd", null, v));
  const pk = str("pubkey");
  if (/^[0-9a-f]{64}$/.test(pk)) fact("operator", link(`#/p/${npub(pk)}`, `${npub(pk).slice(0, 20)}…`));
  const contact = str("contact");
  if (contact)
    fact(
      "contact",
      /^(mailto:|https?:\/\/)/i.test(contact) ? link(contact, contact.replace(/^mailto:/i, "")) : contact,
    );
  if (str("software")) fact("software", `${str("software")} ${str("version")}`.trim());
  const nips = h("span", { class: "nips" });
  for (const n of Array.isArray(info.supported_nips) ? info.supported_nips : [])
    if (typeof n === "number") {
      const id = String(n).padStart(2, "0");
      nips.append(link(`https://github.com/nostr-protocol/nips/blob/master/${id}.md`, id), " ");
    }
  fact("NIPs", nips);
  const limits = h("dl", { class: "limits" });
  for (const [k, v] of Object.entries((info.limitation ?? {}) as Record<string, unknown>))
    limits.append(h("dt", null, k.replace(/_/g, " ")), h("dd", null, String(v)));
  const pics = h("input", { id: "images" });
  pics.type = "checkbox";
  pics.checked = names.images;
  pics.addEventListener("change", () => {
    names.images = pics.checked;
    localStorage.setItem("explorer.images", pics.checked ? "1" : "0");
    route();
  });
  fill(
    $("#info"),
    h("h2", null, "Relay"),
    dl,
    h("details", null, h("summary", null, "Limitations"), limits),
    h("label", { class: "toggle" }, pics, " Load profile pictures (from their own hosts)"),
  );
}

// --- decoding NIP-19 -------------------------------------------------------------------------------

function describe(d: Decoded): (Node | null)[] {
  const field = (k: string, v: string) => [h("dt", null, k), h("dd", null, h("code", null, v))];
  const relays = (rs: string[]) => rs.flatMap((r) => field("relay", r));
  const open = (label: string) => {
    const r = routeOf(d);
    return r ? link(r, label) : null;
  };
  switch (d.type) {
    case "error":
      return [h("p", { class: "muted" }, `Not a NIP-19 entity (${d.message}).`)];
    case "nsec":
      return [
        h("p", { class: "warn" }, "This is a secret key. It was not read; never paste it into a web page."),
      ];
    case "npub":
      return [h("dl", null, ...field("pubkey", d.pubkey)), open("Open profile")];
    case "nprofile":
      return [h("dl", null, ...field("pubkey", d.pubkey), ...relays(d.relays)), open("Open profile")];
    case "note":
      return [h("dl", null, ...field("id", d.id)), open("Open event")];
    case "nevent":
      return [
        h(
          "dl",
          null,
          ...field("id", d.id),
          ...(d.author ? field("author", d.author) : []),
          ...(d.kind !== undefined ? field("kind", String(d.kind)) : []),
          ...relays(d.relays),
        ),
        open("Open event"),
      ];
    case "naddr":
      return [
        h(
          "dl",
          null,
          ...field("kind", String(d.kind)),
          ...field("author", d.pubkey),
          ...field("identifier", d.identifier),
          ...relays(d.relays),
        ),
        open("Open address"),
      ];
    case "nrelay": {
      const own = d.url.replace(/\/$/, "") === wsUrl.replace(/\/$/, "");
      const href = relayHref(d.url);
      return [
        h("dl", null, ...field("relay", d.url)),
        own ? link("#/", "This relay") : href ? link(href, "Open relay page") : null,
      ];
    }
    default:
      d satisfies never;
      return [];
  }
}

function renderDecoder(): void {
  const input = $<HTMLInputElement>("#decode-input");
  const out = $("#decoded");
  input.addEventListener("input", () => {
    const v = input.value.trim();
    if (!v) return fill(out);
    const d = decodeEntity(v);
    fill(out, d.type === "error" ? null : h("p", { class: "etype" }, d.type), ...describe(d));
  });
}

// --- routing -----------------------------------------------------------------------------------------

let current: Dispose = () => {};

function route(): void {
  current();
  const hash = location.hash.replace(/^#\/?/, "");
  const slash = hash.indexOf("/");
  const head = slash < 0 ? hash : hash.slice(0, slash);
  let arg = slash < 0 ? "" : hash.slice(slash + 1);
  try {
    arg = decodeURIComponent(arg);
  } catch {
    // a malformed escape: the raw text is then simply not an entity
  }
  window.scrollTo(0, 0);
  const q = head.startsWith("search?") ? (new URLSearchParams(head.slice(7)).get("q") ?? "").trim() : "";
  $<HTMLInputElement>("#search input").value = q;
  if (q) current = search(shell, q);
  else if (head === "p") {
    const pk = pubkeyOf(arg);
    current = pk ? profile(shell, pk) : notFound(shell, "That is not a pubkey, npub or nprofile.");
  } else if (head === "e") {
    const id = eventIdOf(arg);
    current = id
      ? thread(shell, id.slice(0, 12), { ids: [id] })
      : notFound(shell, "That is not an event id, note or nevent.");
  } else if (head === "a") {
    const d = decodeEntity(arg);
    current =
      d.type === "naddr"
        ? thread(shell, d.identifier || `kind ${d.kind}`, {
            kinds: [d.kind],
            authors: [d.pubkey],
            "#d": [d.identifier],
            limit: 1,
          })
        : notFound(shell, "That is not an naddr.");
  } else if (head === "trending") current = trending(shell);
  else current = home(shell);
}

function wireSearch(): void {
  const form = $<HTMLFormElement>("#search");
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = (form.elements.namedItem("q") as HTMLInputElement).value.trim();
    if (!q) return;
    // An entity is not searchable text (the index drops them): open what it names instead.
    location.hash = routeOf(decodeEntity(q)) ?? `#/search?q=${encodeURIComponent(q)}`;
  });
}

renderAddress();
renderStats();
renderInfo();
renderDecoder();
wireSearch();
window.addEventListener("hashchange", route);
route();
