// The named operations of the documents codegen loaded, as the two local plugins
// (documents.cjs, methods.cjs) need them: name, kind, text to send, doc comment, and
// whether a caller must pass variables.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { Kind, print, visit } = require("graphql");

// The repository's root: locations are written relative to it, so that the generated
// code is the same in every checkout.
const ROOT = path.resolve(__dirname, "..", "..", "..");

const SUFFIX = { query: "Query", mutation: "Mutation", subscription: "Subscription" };

/** Fragments an operation spreads, directly or through other fragments, in name order. */
function fragmentsOf(node, byName, seen = new Set()) {
  visit(node, {
    FragmentSpread(spread) {
      const name = spread.name.value;
      if (seen.has(name)) return;
      const fragment = byName.get(name);
      if (!fragment) throw new Error(`unknown fragment ${name}`);
      seen.add(name);
      fragmentsOf(fragment, byName, seen);
    },
  });
  return [...seen].sort().map((name) => byName.get(name));
}

/** The `#` lines right above `keyword Name` in a file: the operation's description. */
function commentAbove(source, kind, name) {
  const lines = source.split(/\r?\n/);
  const start = lines.findIndex((line) => new RegExp(`^\\s*${kind}\\s+${name}\\b`).test(line));
  const comment = [];
  for (let i = start - 1; i >= 0 && /^\s*#/.test(lines[i]); i--) {
    comment.unshift(lines[i].replace(/^\s*#\s?/, ""));
  }
  return comment.join("\n").trim();
}

/** Every named operation, in the order codegen loaded the files (sorted by path). */
function operations(documents) {
  const fragments = new Map();
  for (const file of documents) {
    for (const def of file.document.definitions) {
      if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    }
  }
  const found = [];
  const names = new Set();
  for (const file of documents) {
    const source = fs.readFileSync(file.location, "utf8");
    const relative = path.relative(ROOT, file.location).split(path.sep).join("/");
    for (const def of file.document.definitions) {
      if (def.kind !== Kind.OPERATION_DEFINITION) continue;
      if (!def.name) throw new Error(`${relative}: every operation needs a name`);
      const name = def.name.value;
      if (names.has(name)) throw new Error(`${relative}: a second operation named ${name}`);
      names.add(name);
      const parts = [def, ...fragmentsOf(def, fragments)].map((node) => print(stripLocations(node)));
      const suffix = SUFFIX[def.operation];
      found.push({
        name,
        kind: def.operation,
        file: relative,
        text: parts.join("\n\n"),
        comment: commentAbove(source, def.operation, name),
        variablesRequired: (def.variableDefinitions || []).some(
          (v) => v.type.kind === Kind.NON_NULL_TYPE && !v.defaultValue,
        ),
        resultType: `${name}${suffix}`,
        variablesType: `${name}${suffix}Variables`,
        documentName: `${name}Document`,
      });
    }
  }
  return found;
}

function stripLocations(node) {
  return JSON.parse(JSON.stringify(node, (key, value) => (key === "loc" ? undefined : value)));
}

/** `text` as a template literal's source. */
function templateLiteral(text) {
  return "`" + text.replace(/\\/g, "\\\\").replace(/`/g, "\\`").replace(/\$\{/g, "\\${") + "`";
}

/** `text` as the lines of a JSDoc comment, indented by `indent`. */
function jsdoc(text, indent = "") {
  const lines = text.replace(/\*\//g, "*\\/").split("\n");
  return [`${indent}/**`, ...lines.map((line) => `${indent} *${line ? " " + line : ""}`), `${indent} */`].join("\n");
}

module.exports = { operations, templateLiteral, jsdoc };
