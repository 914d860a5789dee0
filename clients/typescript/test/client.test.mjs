// The client against a real server over HTTP: an episode and its facts written and read
// back with the typed methods, a bitemporal read after a supersession, and the typed
// errors chosen by the server's codes.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  BadRequest,
  InvalidInput,
  InvalidQuery,
  Ostrakon,
  OstrakonError,
  SearchDocument,
  Unavailable,
  UnknownEntity,
  UnknownRecord,
} from "ostrakon";

import { skipReason, startServer } from "./server.mjs";

describe("over HTTP", { skip: skipReason() ?? false }, () => {
  let server;
  let client;

  before(async () => {
    server = await startServer();
    client = new Ostrakon({ url: server.url });
  });

  after(async () => {
    await client?.close();
    await server?.stop();
  });

  test("records an episode with its facts and reads them back", async () => {
    const recorded = await client.mutationRecordEpisode({
      namespace: "rec",
      episode: { text: "Dana joined Globex in March.", occurredAt: "2024-03-15", externalId: "m1" },
      entities: [{ name: "Dana", kind: "person" }, { name: "Globex", aliases: ["Globex Corp"] }],
      facts: [
        {
          subject: { name: "Dana" },
          predicate: "worksAt",
          object: { entity: { name: "globex corp" } },
          validFrom: "2024-03",
        },
      ],
    });
    const { recordEpisode } = recorded;
    assert.ok(recordEpisode.seq >= 1);
    assert.equal(recordEpisode.episode.externalId, "m1");
    assert.equal(recordEpisode.episode.occurredAt, "2024-03-15T00:00:00.000000Z");
    assert.deepEqual(recordEpisode.entities.map((e) => e.name), ["Dana", "Globex"]);
    assert.equal(recordEpisode.facts.length, 1);
    const [fact] = recordEpisode.facts;
    assert.equal(fact.subject?.name, "Dana");
    assert.equal(fact.object.entity?.name, "Globex");
    assert.equal(fact.valid.from, "2024-03-01T00:00:00.000000Z");
    assert.equal(fact.status, "CURRENT");
    assert.equal(fact.provenance[0]?.externalId, "m1");

    const { entity } = await client.entity({ namespace: "rec", name: "Dana" });
    assert.equal(entity.kind, "person");
    assert.deepEqual(
      entity.facts.map((f) => [f.predicate, f.object.type, f.object.entity?.name]),
      [["worksAt", "ENTITY", "Globex"]],
    );
    // A Date is sent as its ISO 8601 text; before March 2024 Dana worked nowhere.
    const before2024 = await client.entity({ namespace: "rec", name: "Dana", validAt: new Date("2024-01-01T00:00:00Z") });
    assert.deepEqual(before2024.entity.facts, []);
    // The same read through execute and the operation's typed document.
    const { search } = await client.execute(SearchDocument, { namespace: "rec", text: "Globex", limit: 3 });
    assert.equal(typeof search.basis.seq, "number");
  });

  test("a later value of a ONE predicate supersedes the earlier from its start", async () => {
    const ns = "bitemporal";
    const defined = await client.definePredicate({
      namespace: ns,
      name: "livesIn",
      cardinality: "ONE",
      valueType: "ENTITY",
    });
    assert.equal(defined.definePredicate.predicate.cardinality, "ONE");
    const lisbon = await client.mutationRecordEpisode({
      namespace: ns,
      episode: { text: "Ana moved to Lisbon in 2019.", occurredAt: "2019-06-01" },
      entities: [{ name: "Ana" }, { name: "Lisbon" }],
      facts: [{ subject: { name: "Ana" }, predicate: "livesIn", object: { entity: { name: "Lisbon" } }, validFrom: "2019" }],
    });
    const knownBeforePorto = lisbon.recordEpisode.systemTime;
    await client.mutationAssertFacts({
      namespace: ns,
      facts: [{ subject: { name: "Ana" }, predicate: "livesIn", object: { entity: { name: "Porto" } }, validFrom: "2023" }],
    });

    const home = async (validAt, knownAt) => {
      const { entity } = await client.entityAsOfValidTime({ namespace: ns, name: "Ana", validAt, knownAt });
      return entity.facts.filter((f) => f.predicate === "livesIn").map((f) => f.object.entity?.name);
    };
    assert.deepEqual(await home("2020"), ["Lisbon"]);
    assert.deepEqual(await home("2024"), ["Porto"]);
    assert.deepEqual(await home("2018"), []);
    // As known before Porto was written, 2024 is still Lisbon's.
    assert.deepEqual(await home("2024", knownBeforePorto), ["Lisbon"]);

    const { history } = await client.historySupersession({ namespace: ns, subject: "Ana", predicate: "livesIn" });
    const byCity = Object.fromEntries(history.nodes.map((n) => [n.object.entity?.name, n]));
    assert.equal(byCity.Lisbon.status, "SUPERSEDED");
    assert.equal(byCity.Lisbon.supersededBy?.object.entity?.name, "Porto");
    assert.deepEqual(byCity.Lisbon.effective, [{ from: "2019-01-01T00:00:00.000000Z", to: "2023-01-01T00:00:00.000000Z" }]);
    assert.equal(byCity.Porto.status, "CURRENT");
  });

  test("an unknown entity is UnknownEntity, with its code and path", async () => {
    const error = await client
      .execute('{ facts(namespace: "rec", subject: { name: "Nobody" }) { nodes { id } } }')
      .then(() => assert.fail("no error"), (e) => e);
    assert.ok(error instanceof UnknownEntity);
    assert.ok(error instanceof UnknownRecord);
    assert.ok(error instanceof OstrakonError);
    assert.ok(error instanceof Error);
    assert.equal(error.code, "UNKNOWN_ENTITY");
    assert.equal(error.name, "UnknownEntity");
    assert.deepEqual(error.path, ["facts"]);
    assert.match(error.message, /Nobody/);
    assert.equal(error.errors.length, 1);
    // A typed method throws the same.
    await assert.rejects(
      client.mutationAssertFacts({
        namespace: "rec",
        facts: [{ subject: { id: "999" }, predicate: "knows", object: { entity: { name: "Dana" } } }],
      }),
      (e) => e instanceof UnknownEntity && e.code === "UNKNOWN_ENTITY",
    );
  });

  test("a namespace whose name cannot exist is InvalidInput (INVALID_VALUE)", async () => {
    await assert.rejects(client.namespace({ name: "../etc" }), (e) => {
      assert.ok(e instanceof InvalidInput);
      assert.equal(e.code, "INVALID_VALUE");
      assert.deepEqual(e.path, ["namespace"]);
      return true;
    });
    await assert.rejects(
      client.entityAsOfValidTime({ namespace: "rec", name: "Dana", validAt: "not a time" }),
      (e) => e instanceof InvalidInput && e.code === "INVALID_TIME",
    );
  });

  test("a SPARQL query that is not valid is InvalidQuery", async () => {
    await assert.rejects(
      client.execute('query Bad($q: String!) { sparql(namespace: "rec", query: $q) { form } }', { q: "SELEC ?x" }),
      (e) => e instanceof InvalidQuery && e.code === "INVALID_QUERY" && e.path[0] === "sparql",
    );
  });

  test("a document the schema does not have is BadRequest", async () => {
    await assert.rejects(client.execute("{ noSuchField }"), (e) => e instanceof BadRequest && e.code === "BAD_REQUEST");
  });

  test("operationName picks one operation of several", async () => {
    const doc = 'query A { namespace(name: "rec") { name } } query B { namespaces }';
    const data = await client.execute(doc, {}, { operationName: "A" });
    assert.deepEqual(data, { namespace: { name: "rec" } });
  });

  test("a closed client sends nothing", async () => {
    const closed = new Ostrakon(server.url);
    await closed.close();
    await assert.rejects(closed.execute("{ __typename }"), (e) => e instanceof OstrakonError && /closed/.test(e.message));
    await assert.rejects(closed.namespace({ name: "rec" }), /closed/);
  });

  test("a server that is not there is Unavailable", async () => {
    const stopped = await startServer();
    await stopped.stop();
    const nowhere = new Ostrakon(stopped.url);
    await assert.rejects(nowhere.execute("{ __typename }"), (e) => {
      assert.ok(e instanceof Unavailable);
      assert.equal(e.code, "UNAVAILABLE");
      assert.match(e.message, /cannot reach http:\/\/127\.0\.0\.1:\d+\/graphql/);
      return true;
    });
  });
});
