// A graphql-codegen plugin: the class `Operations`, one method per named query or
// mutation (`search(variables)` for `query Search`), each sending its typed document
// through the client's `run`. Subscriptions are left to the client's `subscribe`.
"use strict";

const { operations, jsdoc } = require("./operations.cjs");

// Members of the client the methods must not shadow.
const RESERVED = new Set(["constructor", "execute", "run", "subscribe", "events", "close", "url", "wsUrl"]);

function methodName(name) {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

module.exports = {
  plugin(_schema, documents) {
    const ops = operations(documents).filter((op) => op.kind !== "subscription");
    const imports = new Set();
    const methods = ops.map((op) => {
      const method = methodName(op.name);
      if (RESERVED.has(method)) {
        throw new Error(`${op.file}: the operation ${op.name} would be the method ${method}, which the client has already`);
      }
      imports.add(op.documentName).add(`type ${op.resultType}`).add(`type ${op.variablesType}`);
      const optional = op.variablesRequired ? "" : "?";
      const doc = [op.comment, `\`${op.name}\` (${op.file}).`].filter(Boolean).join("\n\n");
      return [
        jsdoc(doc, "  "),
        `  ${method}(variables${optional}: ${op.variablesType}, options?: RequestOptions): Promise<${op.resultType}> {`,
        `    return this.run(${op.documentName}, variables, options);`,
        "  }",
      ].join("\n");
    });
    const header = [
      'import type { TypedDocument } from "../document.js";',
      'import type { RequestOptions } from "../request.js";',
      `import {\n${[...imports].map((name) => `  ${name},`).join("\n")}\n} from "./graphql.js";`,
      "",
      jsdoc("A method for each named query and mutation of `queries/`, with its variables and result typed."),
      "export abstract class Operations {",
      jsdoc("Sends one typed document and returns its `data`; the client implements it.", "  "),
      "  protected abstract run<R, V>(document: TypedDocument<R, V>, variables: V | undefined, options: RequestOptions | undefined): Promise<R>;",
    ];
    return [...header, "", methods.join("\n\n"), "}", ""].join("\n");
  },
};
