// The drift check: runs codegen into a temporary directory and compares what it writes
// with the committed src/generated/. `node codegen/check.mjs` exits 1 on a difference.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const COMMITTED = path.join(PACKAGE, "src", "generated");

/** The command that runs graphql-codegen's CLI with this package's node. */
function codegenCommand() {
  const require = createRequire(path.join(PACKAGE, "package.json"));
  const manifest = require.resolve("@graphql-codegen/cli/package.json");
  const { bin } = JSON.parse(fs.readFileSync(manifest, "utf8"));
  const script = typeof bin === "string" ? bin : bin["graphql-codegen"];
  return [process.execPath, path.join(path.dirname(manifest), script)];
}

function files(dir) {
  if (!fs.existsSync(dir)) return new Map();
  return new Map(
    fs
      .readdirSync(dir)
      .filter((name) => name.endsWith(".ts"))
      .sort()
      .map((name) => [name, fs.readFileSync(path.join(dir, name), "utf8")]),
  );
}

/** The first lines where two texts differ, as a short report. */
function firstDifference(name, committed, fresh) {
  const a = committed.split("\n");
  const b = fresh.split("\n");
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const show = (lines) => lines.slice(i, i + 5).map((line) => `    ${line}`).join("\n");
  return `${name}: differs from line ${i + 1}\n  committed:\n${show(a)}\n  fresh:\n${show(b)}`;
}

/** Runs codegen afresh; `drift` lists what differs from the committed files. */
export function checkCodegen() {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "ostrakon-codegen-"));
  try {
    const [node, ...args] = codegenCommand();
    const run = spawnSync(node, [...args, "--config", "codegen.ts"], {
      cwd: PACKAGE,
      env: { ...process.env, OSTRAKON_CODEGEN_OUT: out },
      encoding: "utf8",
    });
    if (run.status !== 0) {
      throw new Error(`graphql-codegen failed (${run.status ?? run.signal}):\n${run.stdout}\n${run.stderr}`);
    }
    const fresh = files(out);
    const committed = files(COMMITTED);
    const drift = [];
    for (const name of new Set([...committed.keys(), ...fresh.keys()])) {
      if (!fresh.has(name)) drift.push(`${name}: committed, but codegen no longer writes it`);
      else if (!committed.has(name)) drift.push(`${name}: written by codegen, but not committed`);
      else if (committed.get(name) !== fresh.get(name)) {
        drift.push(firstDifference(name, committed.get(name), fresh.get(name)));
      }
    }
    return { drift, compared: [...fresh.keys()] };
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { drift, compared } = checkCodegen();
  if (drift.length > 0) {
    console.error(drift.join("\n\n"));
    console.error("\nsrc/generated/ differs from schema/schema.graphql and queries/: run `npm run codegen`");
    process.exit(1);
  }
  console.log(`src/generated/ is up to date (${compared.join(", ")})`);
}
