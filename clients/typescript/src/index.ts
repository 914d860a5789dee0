// The package's entry point: the client, its errors, and the generated types.

export { Ostrakon, createClient, type OstrakonOptions, type ExecuteArgs } from "./client.js";
export {
  OstrakonError,
  BadRequest,
  InvalidInput,
  UnknownRecord,
  UnknownEntity,
  UnknownEpisode,
  UnknownFact,
  UnknownPredicate,
  UnknownIntention,
  Conflict,
  WriteConflict,
  Forbidden,
  LimitExceeded,
  Unavailable,
  Gone,
  Damaged,
  InvalidQuery,
  PersistedQueryError,
  ERROR_CLASSES,
  errorFromResponse,
  type GraphQLErrorEntry,
  type OstrakonErrorInit,
} from "./errors.js";
export type {
  DocumentTypeDecoration,
  TypedDocument,
  DocumentNodeLike,
  UntypedDocument,
  ResultOf,
  VariablesOf,
} from "./document.js";
export type { RequestOptions } from "./request.js";
export type { EventNotice, EventObserver, Subscription, SubscriptionOptions } from "./subscriptions.js";
export { Operations } from "./generated/operations.js";
// Every operation's document, result and variables types, and the schema's input and enum types.
export * from "./generated/graphql.js";
