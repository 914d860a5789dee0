// The options one request takes, beside its document and variables.

/** How to send one query or mutation. */
export interface RequestOptions {
  /** The operation to run, when the document holds several. */
  operationName?: string;
  /** Aborts the request: the returned promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Headers to add to this request. */
  headers?: Record<string, string>;
}
