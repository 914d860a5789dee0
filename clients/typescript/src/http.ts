// One GraphQL request over HTTP: POST to `/graphql` with an optional bearer token, and
// the response's `data`, or the error its first error's code names, or `Unavailable`
// when the server cannot be reached or answers something that is not GraphQL.

import { OstrakonError, Unavailable, errorFromResponse, type GraphQLErrorEntry } from "./errors.js";
import type { RequestOptions } from "./request.js";

/** What a request needs beside its document. */
export interface HttpTransport {
  /** The `/graphql` endpoint. */
  url: string;
  token: string | undefined;
  fetch: typeof globalThis.fetch;
  headers: Record<string, string>;
}

interface GraphQLResponse {
  data?: unknown;
  errors?: GraphQLErrorEntry[];
}

/** Sends `query` and returns the response's `data`. */
export async function post(
  transport: HttpTransport,
  query: string,
  variables: unknown,
  options: RequestOptions = {},
): Promise<unknown> {
  const body: Record<string, unknown> = { query, variables: variables ?? {} };
  if (options.operationName) body.operationName = options.operationName;
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json",
    ...transport.headers,
    ...options.headers,
  };
  if (transport.token) headers.Authorization = `Bearer ${transport.token}`;
  let status: number;
  let text: string;
  try {
    const init: RequestInit = { method: "POST", headers, body: JSON.stringify(body) };
    if (options.signal) init.signal = options.signal;
    const response = await transport.fetch(transport.url, init);
    status = response.status;
    text = await response.text();
  } catch (cause) {
    if (options.signal?.aborted) throw options.signal.reason ?? cause;
    const why = cause instanceof Error ? describe(cause) : String(cause);
    throw new Unavailable(`cannot reach ${transport.url}: ${why}`, { cause });
  }
  let parsed: GraphQLResponse;
  try {
    parsed = JSON.parse(text) as GraphQLResponse;
  } catch {
    // GraphQL errors come with 4xx and 5xx statuses too, but as JSON: this is something else.
    const what = `${transport.url} answered ${status} with no GraphQL response: ${text.slice(0, 200)}`;
    throw status >= 400 ? new Unavailable(what) : new OstrakonError(what);
  }
  if (typeof parsed !== "object" || parsed === null) {
    throw new OstrakonError(`${transport.url} answered ${status} with no GraphQL response`);
  }
  if (Array.isArray(parsed.errors) && parsed.errors.length > 0) throw errorFromResponse(parsed.errors);
  if (parsed.data === undefined || parsed.data === null) {
    throw new OstrakonError("the response has neither data nor errors");
  }
  return parsed.data;
}

/** A fetch failure's message with its cause's (Node's fetch says only "fetch failed"). */
function describe(error: Error): string {
  const cause = error.cause;
  if (cause instanceof Error && cause.message && cause.message !== error.message) {
    return `${error.message} (${cause.message})`;
  }
  return error.message;
}
