"""Third-party RDF clients against Ostrakon, as their users run them: SPARQLWrapper
(`pip install SPARQLWrapper`) with its defaults — GET, XML results, `format`/`output`
parameters added to the endpoint's URL — and with JSON and POST, against
`/sparql/{namespace}`; and rdflib (`pip install rdflib`) parsing an N-Quads export.

    python sparql_clients.py BASE_URL NAMESPACE EXPORT.nq HISTORY_STANDARD.nq

Expects the namespace to say that Alice lives in Paris and Bob in London. Prints what
rdflib reads of each fact in the history export (`--history`, whose default is RDF 1.1 reification) (fact,
subject, predicate, object, status, as JSON), then "ok".
"""

import json
import sys

import rdflib
from SPARQLWrapper import CSV, JSON, POST, TSV, SPARQLWrapper

base, namespace, export, standard = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
expected = [("Alice", "Paris"), ("Bob", "London")]
query = "SELECT ?who ?city WHERE { ?p p:livesIn ?c . ?p rdfs:label ?who . ?c rdfs:label ?city } ORDER BY ?who"

# Its defaults: GET, SPARQL results as XML.
client = SPARQLWrapper(f"{base}/sparql/{namespace}")
client.setQuery(query)
document = client.query().convert()
rows = []
for result in document.getElementsByTagName("result"):
    values = {}
    for binding in result.getElementsByTagName("binding"):
        values[binding.getAttribute("name")] = binding.getElementsByTagName("literal")[0].firstChild.data
    rows.append((values["who"], values["city"]))
assert rows == expected, rows

# JSON, by GET and by POST.
for method in ["GET", POST]:
    client = SPARQLWrapper(f"{base}/sparql/{namespace}")
    client.setQuery(query)
    client.setReturnFormat(JSON)
    if method == POST:
        client.setMethod(POST)
    answer = client.queryAndConvert()
    rows = [(b["who"]["value"], b["city"]["value"]) for b in answer["results"]["bindings"]]
    assert rows == expected, (method, rows)

# CSV and TSV, by GET and by POST (for TSV SPARQLWrapper sends each format parameter
# twice: `tsv`, then its media type).
for fmt in [CSV, TSV]:
    for method in ["GET", POST]:
        client = SPARQLWrapper(f"{base}/sparql/{namespace}")
        client.setQuery(query)
        client.setReturnFormat(fmt)
        if method == POST:
            client.setMethod(POST)
        text = client.query().convert().decode()
        separator = "," if fmt == CSV else "\t"
        lines = [line.split(separator) for line in text.strip().splitlines()]
        rows = [tuple(cell.strip('"') for cell in line) for line in lines[1:]]
        assert rows == expected, (fmt, method, text)

# rdflib reads the export, and finds the same facts in it.
graph = rdflib.Dataset(default_union=True)
graph.parse(export, format="nquads")
label = rdflib.RDFS.label
lives = {p for _, p, _, _ in graph.quads((None, None, None, None)) if str(p).endswith(":livesIn")}
assert len(lives) == 1, lives
lives_in = lives.pop()
rows = sorted((str(graph.value(s, label)), str(graph.value(o, label))) for s, _, o in graph.triples((None, lives_in, None)))
assert rows == expected, rows

# The history as exported by default (RDF 1.1 reification): rdflib reads every fact's statement.
history = rdflib.Dataset(default_union=True)
history.parse(standard, format="nquads")
RDF = rdflib.RDF
status = rdflib.URIRef("urn:ostrakon:vocab:status")
facts = []
for fact, _, _ in history.triples((None, RDF.type, RDF.Statement)):
    facts.append([str(fact), str(history.value(fact, RDF.subject)), str(history.value(fact, RDF.predicate)),
                  str(history.value(fact, RDF.object)), str(history.value(fact, status))])
assert len(facts) >= 4, facts
print(json.dumps(sorted(facts)))
print("ok")
