// What `execute` sends: a document's text typed with its result and variables (the
// generated `…Document` constants), or any typed document of the GraphQL ecosystem
// (graphql-codegen's TypedDocumentNode and TypedDocumentString), or an untyped one.

/**
 * The phantom member through which typed documents carry their result `R` and
 * variables `V` (the same as `@graphql-typed-document-node/core`'s, so those fit too).
 */
export interface DocumentTypeDecoration<R, V> {
  readonly __apiType?: (variables: V) => R;
}

/** A document's text, typed with its result `R` and variables `V`. */
export type TypedDocument<R, V> = string & DocumentTypeDecoration<R, V>;

/** A parsed document (graphql-js's `DocumentNode`), as far as the client reads one. */
export interface DocumentNodeLike {
  readonly kind: string;
  readonly loc?: { readonly source: { readonly body: string } };
}

/**
 * A document without types: its text or a parsed document. (A typed one is refused
 * here, so that it cannot lose its variables' check.)
 */
export type UntypedDocument = (string | DocumentNodeLike) & { readonly __apiType?: undefined };

/** The result type a typed document declares. */
export type ResultOf<D> = D extends DocumentTypeDecoration<infer R, any> ? R : never;

/** The variables type a typed document declares. */
export type VariablesOf<D> = D extends DocumentTypeDecoration<any, infer V> ? V : never;

/**
 * The text to send for a document: a string (or `String` object, such as a
 * TypedDocumentString) as it is, a parsed document by the source it was parsed from.
 */
export function documentText(document: unknown): string {
  if (typeof document === "string") return document;
  if (document instanceof String) return document.toString();
  if (typeof document === "object" && document !== null) {
    const body = (document as DocumentNodeLike).loc?.source?.body;
    if (typeof body === "string") return body;
    if ((document as DocumentNodeLike).kind === "Document") {
      throw new TypeError(
        "a parsed document without its source: pass its text (graphql's print(document)) instead",
      );
    }
  }
  throw new TypeError("a GraphQL document is a string or a parsed document");
}
