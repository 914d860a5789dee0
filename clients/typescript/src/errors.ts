// Errors the client throws: one class per GraphQL error code (`extensions.code`), the
// first error of a response choosing it, and `Unavailable` when the server cannot be
// reached. The same classes and codes as the Python client's `ostrakon.errors`.

/** One error of a GraphQL response, as the server sends it. */
export interface GraphQLErrorEntry {
  message: string;
  path?: ReadonlyArray<string | number>;
  locations?: ReadonlyArray<{ line: number; column: number }>;
  extensions?: { code?: string; [key: string]: unknown };
}

/** What an error is built from, beside its message. */
export interface OstrakonErrorInit {
  /** The code; the class's own when absent. */
  code?: string;
  /** Where in the response the error is (`["facts"]`). */
  path?: ReadonlyArray<string | number>;
  /** Every error of the response, as GraphQL gave them. */
  errors?: ReadonlyArray<GraphQLErrorEntry>;
  /** What caused it (a failed connection). */
  cause?: unknown;
}

/** An error Ostrakon answered (or the transport met), with its code, message and path. */
export class OstrakonError extends Error {
  /** The code of an error of this class built without one. */
  static readonly defaultCode: string = "INTERNAL";
  /** The stable code, as in `extensions.code` (`UNKNOWN_ENTITY`). */
  readonly code: string;
  /** Where in the response the error is; empty when it is about the whole request. */
  readonly path: ReadonlyArray<string | number>;
  /** Every error of the response, as GraphQL gave them. */
  readonly errors: ReadonlyArray<GraphQLErrorEntry>;

  constructor(message: string, init: OstrakonErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code ?? (new.target as typeof OstrakonError).defaultCode;
    this.path = init.path ?? [];
    this.errors = init.errors ?? [];
  }

  override toString(): string {
    const where = this.path.length > 0 ? ` at ${this.path.join(".")}` : "";
    return `${this.name} ${this.code}${where}: ${this.message}`;
  }
}

/** The document or its variables are not valid (BAD_REQUEST, NOT_ACCEPTABLE). */
export class BadRequest extends OstrakonError {
  static override readonly defaultCode: string = "BAD_REQUEST";
}

/**
 * A time, interval or value that cannot be read (INVALID_TIME, INVALID_INTERVAL,
 * INVALID_VALUE, WRONG_VALUE_TYPE).
 */
export class InvalidInput extends OstrakonError {}

/** An entity, episode, fact, predicate or intention that does not exist. */
export class UnknownRecord extends OstrakonError {}

/** An entity that does not exist (UNKNOWN_ENTITY). */
export class UnknownEntity extends UnknownRecord {
  static override readonly defaultCode: string = "UNKNOWN_ENTITY";
}

/** An episode that does not exist (UNKNOWN_EPISODE). */
export class UnknownEpisode extends UnknownRecord {
  static override readonly defaultCode: string = "UNKNOWN_EPISODE";
}

/** A fact that does not exist (UNKNOWN_FACT). */
export class UnknownFact extends UnknownRecord {
  static override readonly defaultCode: string = "UNKNOWN_FACT";
}

/** A predicate neither declared nor used (UNKNOWN_PREDICATE). */
export class UnknownPredicate extends UnknownRecord {
  static override readonly defaultCode: string = "UNKNOWN_PREDICATE";
}

/** An intention that does not exist (UNKNOWN_INTENTION). */
export class UnknownIntention extends UnknownRecord {
  static override readonly defaultCode: string = "UNKNOWN_INTENTION";
}

/**
 * The write contradicts what is stored (ALREADY_RETRACTED, NOT_A_FACT,
 * SUPERSEDES_OTHER_SLOT, DUPLICATE_EXTERNAL_ID, ALREADY_EXTRACTED, CONFIRMATION_MISMATCH).
 */
export class Conflict extends OstrakonError {}

/** Another writer got there first; the write can be sent again (WRITE_CONFLICT). */
export class WriteConflict extends OstrakonError {
  static override readonly defaultCode: string = "WRITE_CONFLICT";
}

/** The token may not do this, or there is none (FORBIDDEN, OPERATION_NOT_ALLOWED). */
export class Forbidden extends OstrakonError {
  static override readonly defaultCode: string = "FORBIDDEN";
}

/** The request passes a documented limit (LIMIT_EXCEEDED). */
export class LimitExceeded extends OstrakonError {
  static override readonly defaultCode: string = "LIMIT_EXCEEDED";
}

/**
 * The store cannot answer now; try again (UNAVAILABLE, INDEX_BEHIND, NOT_YET_KNOWN,
 * ERASURE_UNFINISHED), or the server could not be reached.
 */
export class Unavailable extends OstrakonError {
  static override readonly defaultCode: string = "UNAVAILABLE";
}

/** What was asked for was erased or its namespace dropped (ERASED, NAMESPACE_DROPPED). */
export class Gone extends OstrakonError {}

/** A namespace's log is damaged (NAMESPACE_DAMAGED). */
export class Damaged extends OstrakonError {
  static override readonly defaultCode: string = "NAMESPACE_DAMAGED";
}

/** A SPARQL query that is not valid (INVALID_QUERY). */
export class InvalidQuery extends OstrakonError {
  static override readonly defaultCode: string = "INVALID_QUERY";
}

/** A persisted query that is unknown, mismatched or not supported. */
export class PersistedQueryError extends OstrakonError {}

/** The class for each code the server sends; any other is an `OstrakonError`. */
export const ERROR_CLASSES: Readonly<Record<string, typeof OstrakonError>> = Object.freeze({
  BAD_REQUEST: BadRequest,
  INVALID_TIME: InvalidInput,
  INVALID_INTERVAL: InvalidInput,
  INVALID_VALUE: InvalidInput,
  WRONG_VALUE_TYPE: InvalidInput,
  UNKNOWN_ENTITY: UnknownEntity,
  UNKNOWN_EPISODE: UnknownEpisode,
  UNKNOWN_FACT: UnknownFact,
  UNKNOWN_PREDICATE: UnknownPredicate,
  UNKNOWN_INTENTION: UnknownIntention,
  ALREADY_RETRACTED: Conflict,
  NOT_A_FACT: Conflict,
  SUPERSEDES_OTHER_SLOT: Conflict,
  DUPLICATE_EXTERNAL_ID: Conflict,
  ALREADY_EXTRACTED: Conflict,
  CONFIRMATION_MISMATCH: Conflict,
  WRITE_CONFLICT: WriteConflict,
  FORBIDDEN: Forbidden,
  OPERATION_NOT_ALLOWED: Forbidden,
  LIMIT_EXCEEDED: LimitExceeded,
  UNAVAILABLE: Unavailable,
  INDEX_BEHIND: Unavailable,
  NOT_YET_KNOWN: Unavailable,
  ERASURE_UNFINISHED: Unavailable,
  ERASED: Gone,
  NAMESPACE_DROPPED: Gone,
  NAMESPACE_DAMAGED: Damaged,
  INVALID_QUERY: InvalidQuery,
  NOT_ACCEPTABLE: BadRequest,
  PERSISTED_QUERY_NOT_FOUND: PersistedQueryError,
  PERSISTED_QUERY_HASH_MISMATCH: PersistedQueryError,
  PERSISTED_QUERY_NOT_SUPPORTED: PersistedQueryError,
});

/** The error for a GraphQL response's errors: the first error's code chooses its class. */
export function errorFromResponse(errors: ReadonlyArray<GraphQLErrorEntry>): OstrakonError {
  const first: Partial<GraphQLErrorEntry> = errors[0] ?? {};
  const code = typeof first.extensions?.code === "string" ? first.extensions.code : "INTERNAL";
  const Class = Object.hasOwn(ERROR_CLASSES, code) ? ERROR_CLASSES[code]! : OstrakonError;
  const message = typeof first.message === "string" ? first.message : "unknown error";
  return new Class(message, { code, path: first.path ?? [], errors });
}
