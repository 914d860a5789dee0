// The error classes: each code the server sends gives the class the Python client
// raises for it (python/ostrakon/errors.py), with its code, message and path.

import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";

import * as ostrakon from "ostrakon";

const { ERROR_CLASSES, OstrakonError, errorFromResponse } = ostrakon;

const PYTHON_ERRORS = new URL("../../../python/ostrakon/errors.py", import.meta.url);

test("every code maps to the class the Python client uses", () => {
  const source = fs.readFileSync(PYTHON_ERRORS, "utf8");
  const table = source.slice(source.indexOf("_BY_CODE"));
  const python = Object.fromEntries([...table.matchAll(/"([A-Z_]+)":\s*(\w+),/g)].map((m) => [m[1], m[2]]));
  assert.ok(Object.keys(python).length > 20, "the Python table was read");
  const typescript = Object.fromEntries(Object.entries(ERROR_CLASSES).map(([code, Class]) => [code, Class.name]));
  assert.deepEqual(typescript, python);
  for (const name of new Set(Object.values(python))) {
    assert.equal(typeof ostrakon[name], "function", `${name} is exported`);
  }
});

test("the first error's code chooses the class", () => {
  const errors = [
    { message: "unknown entity in `subject`", path: ["facts"], extensions: { code: "UNKNOWN_ENTITY" } },
    { message: "another", extensions: { code: "INVALID_TIME" } },
  ];
  const error = errorFromResponse(errors);
  assert.ok(error instanceof ostrakon.UnknownEntity);
  assert.ok(error instanceof ostrakon.UnknownRecord);
  assert.equal(error.code, "UNKNOWN_ENTITY");
  assert.equal(error.message, "unknown entity in `subject`");
  assert.deepEqual(error.path, ["facts"]);
  assert.equal(error.errors, errors);
  assert.equal(String(error), "UnknownEntity UNKNOWN_ENTITY at facts: unknown entity in `subject`");
});

test("a code the client does not know, or none, is an OstrakonError", () => {
  const unknown = errorFromResponse([{ message: "new", extensions: { code: "SOMETHING_NEW" } }]);
  assert.equal(unknown.constructor, OstrakonError);
  assert.equal(unknown.code, "SOMETHING_NEW");
  const none = errorFromResponse([{ message: "internal error; see the server log" }]);
  assert.equal(none.code, "INTERNAL");
  assert.deepEqual(none.path, []);
});

test("classes built by hand take their own code", () => {
  assert.equal(new ostrakon.Forbidden("no").code, "FORBIDDEN");
  assert.equal(new ostrakon.Unavailable("down", { cause: new Error("refused") }).cause.message, "refused");
  assert.equal(new ostrakon.InvalidQuery("bad").name, "InvalidQuery");
});

test("a URL that is not http(s) is refused", () => {
  assert.throws(() => new ostrakon.Ostrakon("ws://127.0.0.1:7070"), TypeError);
  assert.throws(() => new ostrakon.Ostrakon("not a url"), TypeError);
});
