// The `events` subscription over the WebSocket: an event arrives after a write, through
// a callback and through the async iterator; a refused subscription is a typed error.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import WebSocket from "ws";

import { InvalidInput, Ostrakon, Unavailable } from "ostrakon";

import { skipReason, startServer } from "./server.mjs";

/**
 * Writes an episode to `namespace` every 200 ms until `arrived` settles: the server
 * takes the subscription a moment after the socket opens, and only later events reach it.
 */
async function writeUntil(client, namespace, arrived) {
  let settled = false;
  const watched = arrived.finally(() => {
    settled = true;
  });
  for (let i = 0; !settled && i < 50; i++) {
    await client.mutationRecordEpisode({ namespace, episode: { text: `note ${i}` } });
    await Promise.race([watched, new Promise((resolve) => setTimeout(resolve, 200))]);
  }
  return watched;
}

describe("subscriptions", { skip: skipReason() ?? false }, () => {
  let server;
  let client;

  before(async () => {
    server = await startServer();
    client = new Ostrakon({ url: server.url, webSocketImpl: WebSocket });
  });

  after(async () => {
    await client?.close();
    await server?.stop();
  });

  test("the endpoints", () => {
    assert.equal(client.url, `${server.url}/graphql`);
    assert.equal(client.wsUrl, `${server.url.replace("http:", "ws:")}/graphql/ws`);
    assert.equal(new Ostrakon("https://memory.example/base/graphql/").wsUrl, "wss://memory.example/base/graphql/ws");
  });

  test("a callback receives the event of a write", async () => {
    let first;
    const arrived = new Promise((resolve) => {
      first = resolve;
    });
    const subscription = client.subscribe("sub-callback", first, (error) => assert.fail(error));
    const event = await writeUntil(client, "sub-callback", arrived);
    subscription.unsubscribe();
    await subscription.done;
    assert.equal(event.namespace, "sub-callback");
    assert.equal(event.kind, "EpisodeRecorded");
    assert.equal(typeof event.seq, "number");
    assert.ok(event.episode);
    assert.match(event.systemTime, /^\d{4}-\d\d-\d\dT/);
    assert.equal(typeof event.data, "object");
  });

  test("the async iterator yields the events of a write, in log order", async () => {
    const iterator = client.events("sub-iterator");
    const first = iterator.next();
    const { value, done } = await writeUntil(client, "sub-iterator", first);
    assert.equal(done, false);
    assert.equal(value.namespace, "sub-iterator");
    await client.mutationRecordEpisode({ namespace: "sub-iterator", episode: { text: "one more" } });
    const second = await iterator.next();
    assert.ok(second.value.seq >= value.seq);
    // Leaving the loop ends the subscription.
    assert.deepEqual(await iterator.return(undefined), { value: undefined, done: true });
  });

  test("aborting the signal ends the iteration", async () => {
    const controller = new AbortController();
    const seen = [];
    const loop = (async () => {
      for await (const event of client.events("sub-abort", { signal: controller.signal })) seen.push(event);
    })();
    setTimeout(() => controller.abort(), 300);
    await loop;
    assert.deepEqual(seen, []);
  });

  test("a refused subscription rejects with the error its code names", async () => {
    const errors = [];
    const subscription = client.subscribe("../etc", () => assert.fail("an event"), (error) => errors.push(error));
    await assert.rejects(subscription.done, (e) => e instanceof InvalidInput && e.code === "INVALID_VALUE");
    assert.equal(errors.length, 1);
    const iterator = client.events("../etc");
    await assert.rejects(iterator.next(), InvalidInput);
  });

  test("a server that is not there is Unavailable", async () => {
    const stopped = await startServer();
    await stopped.stop();
    const nowhere = new Ostrakon({ url: stopped.url, webSocketImpl: WebSocket });
    await assert.rejects(nowhere.subscribe("x", () => {}).done, (e) => e instanceof Unavailable && /cannot reach ws:/.test(e.message));
    await nowhere.close();
  });
});
