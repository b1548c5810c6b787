// Publishing a note from the home view through a NIP-07 extension (window.nostr): the extension
// signs, the page's WebSocket sends, and the relay's OK is shown as it came; NIP-42 AUTH when the
// relay asks for it. No private key ever touches the page.
import type { NostrEvent } from "../relay/socket.ts";
import { h } from "../render/dom.ts";
import { now, type Shell } from "./shell.ts";

interface Nip07 {
  getPublicKey(): Promise<string>;
  signEvent(t: { kind: number; created_at: number; tags: string[][]; content: string }): Promise<NostrEvent>;
}
const nip07 = (): Nip07 | undefined => (window as unknown as { nostr?: Nip07 }).nostr;

/** The note form of the home view, shown when a NIP-07 signer is present. */
export function publishForm(s: Shell): HTMLElement {
  const text = h("textarea", { "aria-label": "Note text", id: "publish-text" });
  text.placeholder = "Write a note…";
  text.rows = 3;
  const status = h("p", { class: "status", id: "publish-status", "aria-live": "polite" });
  const send = h("button", null, "Sign and publish");
  send.type = "submit";
  const form = h(
    "form",
    { class: "card publish", id: "publish" },
    text,
    h("div", { class: "row" }, send, status),
  );
  const hint = h(
    "p",
    { class: "muted hint" },
    "Install a NIP-07 signer extension to publish from this page.",
  );
  const show = () => {
    form.hidden = !nip07();
    hint.hidden = !form.hidden;
  };
  show();
  // Extensions may inject window.nostr after the page has loaded.
  for (const ms of [300, 1500]) setTimeout(show, ms);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const signer = nip07();
    const content = text.value.trim();
    if (!signer || !content) return;
    send.disabled = true;
    status.className = "status";
    status.textContent = "Waiting for the signer…";
    try {
      const ev = await signer.signEvent({ kind: 1, created_at: now(), tags: [], content });
      status.textContent = "Sending…";
      let [ok, msg] = await s.socket.send(ev);
      if (!ok && msg.startsWith("auth-required:") && (await authenticate(s, signer)))
        [ok, msg] = await s.socket.send(ev);
      status.className = ok ? "status ok" : "status bad";
      status.textContent = ok ? `OK: stored${msg ? ` (${msg})` : ""}` : `Refused: ${msg}`;
      if (ok) text.value = "";
    } catch (err) {
      status.className = "status bad";
      status.textContent = `Not published: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      send.disabled = false;
    }
  });
  return h("div", null, form, hint);
}

/** NIP-42: signs the relay's challenge with the extension; true when the relay accepted it. */
async function authenticate(s: Shell, signer: Nip07): Promise<boolean> {
  if (!s.socket.challenge) return false;
  const ev = await signer.signEvent({
    kind: 22242,
    created_at: now(),
    tags: [
      ["relay", s.wsUrl],
      ["challenge", s.socket.challenge],
    ],
    content: "",
  });
  return (await s.socket.send(ev, "AUTH"))[0];
}
