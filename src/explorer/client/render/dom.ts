// Building DOM nodes for the explorer: text only ever goes in as text nodes, and links only to
// this page's routes, http(s) or mailto, so nothing from an event is ever parsed as HTML.

export type Child = Node | string | number | null | undefined | false;

export interface Props {
  class?: string;
  title?: string;
  id?: string;
  [attr: `data-${string}`]: string;
  [attr: `aria-${string}`]: string;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props)
    for (const [k, v] of Object.entries(props)) {
      if (k === "class") el.className = v;
      else el.setAttribute(k, v);
    }
  append(el, ...children);
  return el;
}

export function append(el: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}

export const isSafeHref = (href: string): boolean => /^(#\/|https?:\/\/|mailto:)/i.test(href);

/** A link; an unsafe target (javascript:, data: …) yields plain text instead. */
export function link(href: string, ...children: Child[]): HTMLAnchorElement | HTMLSpanElement {
  if (!isSafeHref(href)) return h("span", null, ...children);
  const a = h("a", null, ...children);
  a.href = href;
  if (!href.startsWith("#")) {
    a.rel = "nofollow noopener noreferrer";
    a.target = "_blank";
  }
  return a;
}

export function button(label: string, onClick: (b: HTMLButtonElement) => void, cls = ""): HTMLButtonElement {
  const b = h("button", cls ? { class: cls } : null, label);
  b.type = "button";
  b.addEventListener("click", () => onClick(b));
  return b;
}

/** A button that copies `text`; on an insecure page without clipboard access it selects `target`. */
export function copyButton(text: () => string, target?: Element): HTMLButtonElement {
  return button(
    "Copy",
    async (b) => {
      try {
        await navigator.clipboard.writeText(text());
        flash(b, "Copied");
      } catch {
        if (target) getSelection()?.selectAllChildren(target);
        flash(b, "Selected");
      }
    },
    "small",
  );
}

function flash(b: HTMLButtonElement, label: string): void {
  const was = b.textContent;
  b.textContent = label;
  setTimeout(() => {
    b.textContent = was;
  }, 1200);
}

const units: [number, string][] = [
  [60, "s"],
  [60, "m"],
  [24, "h"],
  [30, "d"],
  [12, "mo"],
];

/** "42s", "5m", "3h", "12d", "2y" ago. */
export function ago(seconds: number, now = Date.now() / 1000): string {
  let n = Math.max(0, Math.floor(now - seconds));
  for (const [size, unit] of units) {
    if (n < size) return `${n}${unit}`;
    n = Math.floor(n / size);
  }
  return `${n}y`;
}
