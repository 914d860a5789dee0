// A server with tokens configured: the bearer token over HTTP and in the WebSocket's
// `connection_init`, and `Forbidden` without one.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import WebSocket from "ws";

import { Forbidden, Ostrakon } from "ostrakon";

import { skipReason, startServer } from "./server.mjs";

const TOKEN = "token-for-the-node-tests";
const CONFIG = `[[tokens]]
name = "tests"
token = "${TOKEN}"
namespaces = { "*" = "admin" }
`;

describe("with tokens", { skip: skipReason() ?? false }, () => {
  let server;

  before(async () => {
    server = await startServer({ config: CONFIG });
  });

  after(async () => {
    await server?.stop();
  });

  test("HTTP requests carry the token; without it they are Forbidden", async () => {
    const allowed = new Ostrakon({ url: server.url, token: TOKEN });
    const { namespace } = await allowed.namespace({ name: "auth" });
    assert.equal(namespace.name, "auth");
    for (const token of [undefined, "not-the-token-at-all"]) {
      const refused = new Ostrakon({ url: server.url, token });
      await assert.rejects(refused.namespace({ name: "auth" }), (e) => e instanceof Forbidden && e.code === "FORBIDDEN");
    }
  });

  test("subscriptions carry the token in connection_init; without it they are Forbidden", async () => {
    const allowed = new Ostrakon({ url: server.url, token: TOKEN, webSocketImpl: WebSocket });
    const iterator = allowed.events("auth");
    const first = iterator.next();
    let settled = false;
    first.finally(() => {
      settled = true;
    });
    for (let i = 0; !settled && i < 50; i++) {
      await allowed.mutationRecordEpisode({ namespace: "auth", episode: { text: `note ${i}` } });
      await Promise.race([first, new Promise((resolve) => setTimeout(resolve, 200))]);
    }
    assert.equal((await first).value.namespace, "auth");
    await iterator.return(undefined);
    await allowed.close();

    const refused = new Ostrakon({ url: server.url, webSocketImpl: WebSocket });
    await assert.rejects(refused.subscribe("auth", () => {}).done, (e) => e instanceof Forbidden && e.code === "FORBIDDEN");
    await refused.close();
  });
});
