// The `events` subscription over a WebSocket (graphql-transport-ws at `/graphql/ws`):
// one socket per client, opened with the first subscription and closed after the last,
// the bearer token in `connection_init`, and failures as the client's error classes.

import { createClient, type Client, type ClientOptions } from "graphql-ws";

import { BadRequest, Forbidden, OstrakonError, Unavailable, errorFromResponse, type GraphQLErrorEntry } from "./errors.js";
import { EventsDocument, type EventsSubscription, type EventsSubscriptionVariables } from "./generated/graphql.js";

/** One event committed to a namespace, as the `events` subscription gives it. */
export type EventNotice = EventsSubscription["events"];

/** graphql-ws's options for the socket, but for those the client sets itself. */
export type SubscriptionOptions = Omit<ClientOptions, "url" | "webSocketImpl" | "connectionParams">;

/** What receives a subscription's events and how it ends. */
export interface EventObserver {
  next(event: EventNotice): void;
  /** The subscription failed; no event follows. */
  error?(error: OstrakonError): void;
  /** The server ended the subscription; no event follows. */
  complete?(): void;
}

/** A running subscription. */
export interface Subscription {
  /** Stops it; `done` then resolves. */
  unsubscribe(): void;
  /**
   * Settles when the subscription ends: resolves when it is stopped or the server ends
   * it, rejects with the `OstrakonError` that ended it.
   */
  readonly done: Promise<void>;
}

/** The events subscription of one server. */
export class EventSubscriptions {
  readonly #url: string;
  readonly #token: string | undefined;
  readonly #webSocketImpl: unknown;
  readonly #options: SubscriptionOptions;
  #client: Client | undefined;

  constructor(url: string, token: string | undefined, webSocketImpl: unknown, options: SubscriptionOptions = {}) {
    this.#url = url;
    this.#token = token;
    this.#webSocketImpl = webSocketImpl;
    this.#options = options;
  }

  #socket(): Client {
    if (this.#client) return this.#client;
    const webSocketImpl = this.#webSocketImpl ?? (globalThis as { WebSocket?: unknown }).WebSocket;
    if (!webSocketImpl) {
      throw new TypeError(
        "this runtime has no WebSocket (Node before 22): pass webSocketImpl, such as the ws package's WebSocket",
      );
    }
    const token = this.#token;
    this.#client = createClient({
      // A socket opened again misses the events committed meanwhile: by default a
      // failure ends the subscription instead, and the caller decides.
      retryAttempts: 0,
      // A refused token stays refused.
      shouldRetry: (reason) => !(isCloseEvent(reason) && (reason.code === 4401 || reason.code === 4403)),
      ...this.#options,
      url: this.#url,
      webSocketImpl,
      connectionParams: token ? { Authorization: `Bearer ${token}` } : {},
    });
    return this.#client;
  }

  /** Sends each event committed to `namespace` from now on to `observer`. */
  subscribe(namespace: string, observer: EventObserver): Subscription {
    const socket = this.#socket();
    let settle!: { resolve: () => void; reject: (error: OstrakonError) => void };
    const done = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    // Who only passes callbacks need not await `done`: its rejection is not unhandled.
    done.catch(() => {});
    let ended = false;
    let stop: (() => void) | undefined;
    const end = (error?: OstrakonError): void => {
      if (ended) return;
      ended = true;
      stop?.();
      if (error) {
        observer.error?.(error);
        settle.reject(error);
      } else {
        settle.resolve();
      }
    };
    const variables: EventsSubscriptionVariables = { namespace };
    stop = socket.subscribe<EventsSubscription>(
      { query: EventsDocument, variables },
      {
        next: (result) => {
          if (ended) return;
          if (result.errors && result.errors.length > 0) {
            end(errorFromResponse(result.errors as unknown as GraphQLErrorEntry[]));
          } else if (result.data) {
            observer.next(result.data.events);
          }
        },
        error: (reason) => end(subscriptionError(reason, this.#url)),
        complete: () => {
          if (ended) return;
          ended = true;
          observer.complete?.();
          settle.resolve();
        },
      },
    );
    // Ended while it was being sent: the socket has it now, so it is stopped now.
    if (ended) stop();
    return {
      unsubscribe: () => end(),
      done,
    };
  }

  /**
   * The events committed to `namespace` from now on, as an async iterator: leaving the
   * loop (or `signal` aborting) ends the subscription; a failure is thrown.
   */
  async *events(namespace: string, signal?: AbortSignal): AsyncGenerator<EventNotice, void, undefined> {
    if (signal?.aborted) return;
    const queue: EventNotice[] = [];
    let failure: OstrakonError | undefined;
    let finished = false;
    let wake: (() => void) | undefined;
    const notify = (): void => {
      wake?.();
      wake = undefined;
    };
    const subscription = this.subscribe(namespace, {
      next: (event) => {
        queue.push(event);
        notify();
      },
      error: (error) => {
        failure = error;
        notify();
      },
      complete: () => {
        finished = true;
        notify();
      },
    });
    const onAbort = (): void => {
      finished = true;
      notify();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        if (queue.length > 0) {
          yield queue.shift()!;
        } else if (failure) {
          throw failure;
        } else if (finished) {
          return;
        } else {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      subscription.unsubscribe();
    }
  }

  /** Closes the socket, ending every subscription. */
  async dispose(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    await client?.dispose();
  }
}

interface CloseEventLike {
  code: number;
  reason: string;
}

function isCloseEvent(value: unknown): value is CloseEventLike {
  return typeof value === "object" && value !== null && typeof (value as CloseEventLike).code === "number" && "reason" in value;
}

/** The error for what graphql-ws reports: a response's errors, a close, or a failure. */
function subscriptionError(reason: unknown, url: string): OstrakonError {
  if (reason instanceof OstrakonError) return reason;
  if (Array.isArray(reason) && reason.length > 0) return errorFromResponse(reason as GraphQLErrorEntry[]);
  if (isCloseEvent(reason)) {
    const said = reason.reason ? `: ${reason.reason}` : "";
    if (reason.code === 4401 || reason.code === 4403) {
      return new Forbidden(`${url} refused the subscription (${reason.code})${said || ": missing or unknown bearer token"}`);
    }
    if (reason.code === 4400) return new BadRequest(`${url} closed the subscription (4400)${said}`);
    return new Unavailable(`the connection to ${url} closed (${reason.code})${said}`);
  }
  const why = reason instanceof Error ? reason.message : typeof reason === "object" && reason !== null && "message" in reason ? String((reason as { message: unknown }).message) : String(reason);
  return new Unavailable(`cannot reach ${url}: ${why || "the WebSocket failed"}`, { cause: reason });
}
