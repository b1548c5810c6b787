// What every view is given (the socket, author names, where to draw) and the two ways views
// read the relay: a one-off query that ends at EOSE, and a list fed with stored then live events.
import type { Filter, NostrEvent, RelaySocket } from "../relay/socket.ts";
import { h } from "../render/dom.ts";
import type { EventList, Names } from "../render/views.ts";

export type Dispose = () => void;

export interface Shell {
  socket: RelaySocket;
  names: Names;
  view: HTMLElement;
  wsUrl: string;
  /** the relay's largest `limit` (NIP-11 limitation.max_limit) */
  maxLimit: number;
  setTitle(t: string): void;
}

/** Cards per page, on every view that pages. */
export const PAGE = 30;

export const now = (): number => Math.floor(Date.now() / 1000);

/** The stored events matching `filters`, up to the relay's EOSE (or CLOSED). */
export function fetchOnce(s: Shell, filters: Filter[]): Promise<NostrEvent[]> {
  return new Promise((resolve) => {
    const got: NostrEvent[] = [];
    const close = s.socket.subscribe(filters, {
      event: (e) => {
        s.names.learn(e);
        got.push(e);
      },
      eose: () => {
        close();
        resolve(got);
      },
      closed: () => resolve(got),
    });
  });
}

/**
 * Subscribes `list` to `filters`: stored events (handed to `stored` at EOSE, as one page), then
 * live ones (each to `live`).
 */
export function feed(
  s: Shell,
  list: EventList,
  filters: Filter[],
  where: HTMLElement,
  on: { stored?(page: NostrEvent[]): void; live?(ev: NostrEvent): void } = {},
): Dispose {
  let page: NostrEvent[] | undefined = [];
  return s.socket.subscribe(filters, {
    event: (e) => {
      s.names.learn(e);
      if (page) page.push(e);
      if (list.add(e, !page) && !page) on.live?.(e);
    },
    eose: () => {
      if (page) on.stored?.(page);
      page = undefined;
      list.settled();
    },
    closed: (reason) => {
      list.settled();
      where.append(h("p", { class: "warn" }, `The relay closed this query: ${reason}`));
    },
  });
}
