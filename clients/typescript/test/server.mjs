// Starts the Ostrakon server the tests run against: the binary named by OSTRAKON_BIN, on
// a free port, with a temporary data directory and no embedding model. Without
// OSTRAKON_BIN the tests are skipped, or fail when OSTRAKON_NODE_TEST=required.

import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/** Why the server tests cannot run here (they are then skipped), or null when they can. */
export function skipReason() {
  const bin = process.env.OSTRAKON_BIN;
  const required = process.env.OSTRAKON_NODE_TEST === "required";
  let reason = null;
  if (!bin) reason = "OSTRAKON_BIN is not set (it names the ostrakon binary, e.g. $CARGO_TARGET_DIR/debug/ostrakon)";
  else if (!fs.existsSync(bin)) reason = `OSTRAKON_BIN names ${bin}, which does not exist`;
  if (reason && required) throw new Error(`${reason}; OSTRAKON_NODE_TEST=required, so the tests cannot skip`);
  return reason;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * A running server: `url` is its base (`http://127.0.0.1:PORT`); `stop()` ends it and
 * removes its data. `config` is the text of a TOML configuration (tokens, limits).
 */
export async function startServer({ config } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ostrakon-ts-"));
  const port = await freePort();
  const args = ["serve", "--data", path.join(dir, "data"), "--listen", `127.0.0.1:${port}`];
  if (config) {
    fs.writeFileSync(path.join(dir, "ostrakon.toml"), config);
    args.push("--config", path.join(dir, "ostrakon.toml"));
  }
  const child = spawn(process.env.OSTRAKON_BIN, args, {
    env: { ...process.env, OSTRAKON_EMBEDDER: "off" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  let exited = null;
  const exit = new Promise((resolve) => child.on("exit", (code, signal) => resolve((exited = code ?? signal))));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (exited === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await exit;
      clearTimeout(timer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== null) {
      await stop();
      throw new Error(`the server exited (${exited}) before it answered /livez:\n${stderr}`);
    }
    try {
      const response = await fetch(`${url}/livez`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the server did not answer /livez within 60 s:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, stop };
}
