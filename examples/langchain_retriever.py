"""A LangChain retriever over Ostrakon: documents that say when they were true, when the
memory learned them, and whether something replaced them.
Run: python examples/langchain_retriever.py [DATA_DIR]"""

import datetime as dt
import sys

import ostrakon
from ostrakon.langchain import OstrakonRetriever

DATA = sys.argv[1] if len(sys.argv) > 1 else "memory-langchain"

with ostrakon.open(DATA) as memory:
    memory.execute('mutation { definePredicate(namespace: "ana", name: "worksAt", cardinality: ONE, valueType: ENTITY) { seq } }')
    memory.execute(
        """mutation { recordEpisode(namespace: "ana",
             episode: { text: "I started as a nurse at Santa Maria hospital", occurredAt: "2019-03-04", role: "user" },
             facts: [{ subject: { name: "Ana" }, predicate: "worksAt", object: { entity: { name: "Santa Maria" } },
                       validFrom: "2019-03-04" }]) { seq } }"""
    )
    memory.execute(
        """mutation { recordEpisode(namespace: "ana",
             episode: { text: "Big news: I moved to the children's hospital", occurredAt: "2024-09-01", role: "user" },
             facts: [{ subject: { name: "Ana" }, predicate: "worksAt", object: { entity: { name: "Dona Estefania" } },
                       validFrom: "2024-09-01" }]) { seq } }"""
    )

    retriever = OstrakonRetriever(client=memory, namespace="ana", k=4, kinds=["fact", "episode"], include_not_in_force=True)
    for doc in retriever.invoke("Where does Ana work?"):
        meta = doc.metadata
        said = f"{meta['kind']:7} {doc.page_content!r} valid from {meta['valid_from'][:10]}"
        if meta["kind"] == "fact":
            said += f" ({meta['status']}, replaced by {meta['superseded_by']!r})" if meta["superseded"] else f" ({meta['status']})"
        print(said)

    in_2020 = OstrakonRetriever(client=memory, namespace="ana", kinds=["fact"], valid_at=dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc))
    print("in 2020:", [doc.page_content for doc in in_2020.invoke("Where does Ana work?")])
