// graphql-codegen's configuration: the schema's types, one typed document per named
// operation of queries/ (and of operations/, the client's own subscription), and the
// client's method per query and mutation, written to src/generated/ (committed).
// `OSTRAKON_CODEGEN_OUT` writes them elsewhere: the drift check compares a fresh run.
import type { CodegenConfig } from "@graphql-codegen/cli";

const out = process.env.OSTRAKON_CODEGEN_OUT ?? "src/generated";

const config: CodegenConfig = {
  schema: "../../schema/schema.graphql",
  documents: [
    "../../queries/*.graphql",
    // Examples of requests the server refuses: no method for them.
    "!../../queries/error_*.graphql",
    "operations/*.graphql",
  ],
  silent: true,
  generates: {
    [`${out}/graphql.ts`]: {
      plugins: ["codegen/header.cjs", "typescript-operations", "codegen/documents.cjs"],
      config: {
        // Types of inputs and enums only as far as the operations use them.
        onlyOperationTypes: true,
        // Enums as unions of string literals: nothing at run time.
        enumsAsTypes: true,
        namingConvention: "keep",
        skipTypename: true,
        useTypeImports: true,
        scalars: {
          ID: "string",
          // ISO 8601 text; the server also reads partial dates ("2015", "2015-06") and a
          // `Date` is sent as its ISO 8601 text (JSON.stringify).
          DateTime: { input: "string | Date", output: "string" },
          JSON: "unknown",
        },
      },
    },
    [`${out}/operations.ts`]: {
      plugins: ["codegen/header.cjs", "codegen/methods.cjs"],
    },
  },
};

export default config;
