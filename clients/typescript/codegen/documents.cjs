// A graphql-codegen plugin: each named operation as a constant holding the document's
// text, typed with its result and variables (`TypedDocument`, src/document.ts). The
// client sends this text as it is: no GraphQL parser is needed at run time.
"use strict";

const { operations, templateLiteral, jsdoc } = require("./operations.cjs");

module.exports = {
  plugin(_schema, documents) {
    const constants = operations(documents).map((op) =>
      [
        jsdoc(`The ${op.kind} \`${op.name}\` of \`${op.file}\`.`),
        `export const ${op.documentName} = ${templateLiteral(op.text)} as TypedDocument<${op.resultType}, ${op.variablesType}>;`,
      ].join("\n"),
    );
    return {
      prepend: ['import type { TypedDocument } from "../document.js";'],
      content: "\n" + constants.join("\n\n") + "\n",
    };
  },
};
