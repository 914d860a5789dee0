// The client: `execute` for any document, a typed method per named operation of
// queries/ (inherited from the generated `Operations`), and the `events` subscription.

import { documentText, type DocumentTypeDecoration, type TypedDocument, type UntypedDocument } from "./document.js";
import { OstrakonError } from "./errors.js";
import { Operations } from "./generated/operations.js";
import { post, type HttpTransport } from "./http.js";
import type { RequestOptions } from "./request.js";
import {
  EventSubscriptions,
  type EventNotice,
  type EventObserver,
  type Subscription,
  type SubscriptionOptions,
} from "./subscriptions.js";

/** Where the server is and how to reach it. */
export interface OstrakonOptions {
  /** The server, `http://host:port` or `https://…`, with or without `/graphql`. */
  url: string;
  /** A bearer token, for a server with tokens configured. */
  token?: string;
  /** The `fetch` to use; the global one by default (Node 18 and later, browsers). */
  fetch?: typeof globalThis.fetch;
  /** A WebSocket constructor for subscriptions; the global one by default (Node 22, browsers). */
  webSocketImpl?: unknown;
  /** Headers to add to every HTTP request. */
  headers?: Record<string, string>;
  /** graphql-ws options for the subscriptions' socket (`retryAttempts`, `keepAlive`, …). */
  subscriptions?: SubscriptionOptions;
}

/** `variables` (optional when the document needs none) and the request's options. */
export type ExecuteArgs<V> = {} extends V
  ? [variables?: V, options?: RequestOptions]
  : [variables: V, options?: RequestOptions];

/** A client of one Ostrakon server. */
export class Ostrakon extends Operations {
  /** The GraphQL endpoint (`…/graphql`). */
  readonly url: string;
  /** The subscriptions' endpoint (`ws(s)://…/graphql/ws`). */
  readonly wsUrl: string;
  readonly #http: HttpTransport;
  readonly #subscriptions: EventSubscriptions;
  #closed = false;

  constructor(options: OstrakonOptions | string) {
    super();
    const opts = typeof options === "string" ? { url: options } : options;
    const endpoints = endpointsOf(opts.url);
    this.url = endpoints.http;
    this.wsUrl = endpoints.ws;
    if (typeof (opts.fetch ?? globalThis.fetch) !== "function") {
      throw new TypeError("this runtime has no fetch: pass one as the `fetch` option");
    }
    this.#http = {
      url: this.url,
      token: opts.token,
      // Called unbound, the browsers' fetch refuses to run.
      fetch: opts.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      headers: opts.headers ?? {},
    };
    this.#subscriptions = new EventSubscriptions(this.wsUrl, opts.token, opts.webSocketImpl, opts.subscriptions);
  }

  /**
   * Runs a typed document (a generated `…Document`, a TypedDocumentNode or
   * TypedDocumentString) and returns its `data`, typed; throws the `OstrakonError`
   * subclass the first error's code names.
   */
  execute<R, V>(document: DocumentTypeDecoration<R, V>, ...args: ExecuteArgs<V>): Promise<R>;
  /** Runs a document given as text (or parsed) and returns its `data`. */
  execute<R = Record<string, any>>(
    document: UntypedDocument,
    variables?: Record<string, unknown>,
    options?: RequestOptions,
  ): Promise<R>;
  execute(document: unknown, variables?: unknown, options?: RequestOptions): Promise<unknown> {
    return this.#send(document, variables, options);
  }

  protected run<R, V>(document: TypedDocument<R, V>, variables: V | undefined, options: RequestOptions | undefined): Promise<R> {
    return this.#send(document, variables, options) as Promise<R>;
  }

  async #send(document: unknown, variables: unknown, options: RequestOptions | undefined): Promise<unknown> {
    this.#checkOpen();
    return post(this.#http, documentText(document), variables, options);
  }

  #checkOpen(): void {
    if (this.#closed) throw new OstrakonError("the client is closed", { code: "BAD_REQUEST" });
  }

  /**
   * Calls `onEvent` with each event committed to `namespace` from now on, in log order,
   * and `onError` if the subscription fails. Returns the subscription: `unsubscribe()`
   * stops it, `done` settles when it ends.
   */
  subscribe(
    namespace: string,
    onEvent: (event: EventNotice) => void,
    onError?: (error: OstrakonError) => void,
  ): Subscription;
  /** Sends each event committed to `namespace` from now on to `observer`. */
  subscribe(namespace: string, observer: EventObserver): Subscription;
  subscribe(
    namespace: string,
    onEvent: ((event: EventNotice) => void) | EventObserver,
    onError?: (error: OstrakonError) => void,
  ): Subscription {
    this.#checkOpen();
    const observer: EventObserver = typeof onEvent === "function" ? { next: onEvent } : { ...onEvent };
    if (onError) observer.error = onError;
    return this.#subscriptions.subscribe(namespace, observer);
  }

  /**
   * The events committed to `namespace` from now on, in log order:
   * `for await (const event of client.events("demo")) …`. Leaving the loop, or `signal`
   * aborting, ends the subscription; a failure is thrown from the loop.
   */
  events(namespace: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<EventNotice, void, undefined> {
    this.#checkOpen();
    return this.#subscriptions.events(namespace, options.signal);
  }

  /** Ends every subscription and closes their socket; the client sends nothing more. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#subscriptions.dispose();
  }
}

/** A client of the server at `options.url` (the same as `new Ostrakon(options)`). */
export function createClient(options: OstrakonOptions | string): Ostrakon {
  return new Ostrakon(options);
}

/** The HTTP and WebSocket endpoints of a server's URL. */
function endpointsOf(url: string): { http: string; ws: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`${JSON.stringify(url)}: an http:// or https:// URL is expected`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new TypeError(`${JSON.stringify(url)}: an http:// or https:// URL is expected`);
  }
  parsed.search = "";
  parsed.hash = "";
  const path = parsed.pathname.replace(/\/+$/, "");
  parsed.pathname = path.endsWith("/graphql") ? path : `${path}/graphql`;
  const http = parsed.toString();
  parsed.protocol = parsed.protocol === "https:" ? "wss:" : "ws:";
  parsed.pathname = `${parsed.pathname}/ws`;
  return { http, ws: parsed.toString() };
}
