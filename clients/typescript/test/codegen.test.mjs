// The drift check: codegen run afresh writes exactly the committed src/generated/.

import assert from "node:assert/strict";
import { test } from "node:test";

import { checkCodegen } from "../codegen/check.mjs";

test("src/generated/ is what codegen writes from the schema and queries/", () => {
  const { drift, compared } = checkCodegen();
  assert.deepEqual(compared, ["graphql.ts", "operations.ts"]);
  assert.equal(drift.length, 0, `${drift.join("\n\n")}\n\nrun \`npm run codegen\``);
});
