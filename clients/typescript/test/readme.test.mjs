// The README's examples: every TypeScript block type-checks against the built package,
// and the one marked as tested runs against a server and prints what its comments say.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";

import { skipReason, startServer } from "./server.mjs";

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const README = fs.readFileSync(path.join(PACKAGE, "README.md"), "utf8");
const MARKER = "<!-- test/readme.test.mjs runs this block";
const EXAMPLE_URL = "http://127.0.0.1:7070";

/** The README's ```ts blocks, each with whether the marker stands before it. */
function blocks() {
  return [...README.matchAll(/(?:^(<!--[^\n]*-->)\n)?^```ts\n([\s\S]*?)^```$/gm)].map((m) => ({
    code: m[2],
    tested: Boolean(m[1]?.startsWith(MARKER)),
  }));
}

/**
 * A directory inside the package for the examples, so that `import "ostrakon"` finds
 * this package (its `exports`, with the types) as it would once installed.
 */
function scratch() {
  return fs.mkdtempSync(path.join(PACKAGE, ".readme-"));
}

/** The lines a block says it prints: the `// …` after each console.log, split at ", then ". */
function expectedOutput(code) {
  return [...code.matchAll(/console\.log\(.*\); \/\/ (.*)$/gm)].flatMap((m) => m[1].split(", then "));
}

test("the README has one tested example and more", () => {
  const all = blocks();
  assert.equal(all.filter((b) => b.tested).length, 1);
  assert.ok(all.length >= 3);
});

test("every TypeScript block of the README type-checks", () => {
  const dir = scratch();
  try {
    const files = blocks().map((block, i) => {
      const name = `block${i}.mts`;
      fs.writeFileSync(path.join(dir, name), block.code);
      return name;
    });
    // What a project on Node uses: Node's types, no DOM.
    const tsconfig = {
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        types: ["node"],
        skipLibCheck: false,
      },
      files,
    };
    fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify(tsconfig));
    const require = createRequire(path.join(PACKAGE, "package.json"));
    const tsc = path.join(path.dirname(require.resolve("typescript/package.json")), "bin", "tsc");
    const run = spawnSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8" });
    assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe("the README's example", { skip: skipReason() ?? false }, () => {
  let server;

  before(async () => {
    server = await startServer();
  });

  after(async () => {
    await server?.stop();
  });

  test("runs against a server and prints what it says", () => {
    const [example] = blocks().filter((b) => b.tested);
    assert.ok(example.code.includes(EXAMPLE_URL), `the example connects to ${EXAMPLE_URL}`);
    const dir = scratch();
    try {
      const file = path.join(dir, "example.mjs");
      fs.writeFileSync(file, example.code.replaceAll(EXAMPLE_URL, server.url));
      const run = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 60_000 });
      assert.equal(run.status, 0, `the example failed:\n${run.stdout}${run.stderr}`);
      assert.deepEqual(run.stdout.trim().split("\n"), expectedOutput(example.code));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
