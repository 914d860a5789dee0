"""A LangGraph graph whose long-term memory is Ostrakon: one thread learns where the user
lives, a later thread (after a restart) recalls it, and the memory can still say what it
knew before the user moved. Run: python examples/langgraph_memory.py [DATA_DIR]"""

import datetime as dt
import sys
import time
from typing import TypedDict

from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph

import ostrakon
from ostrakon.langgraph import OstrakonStore

DATA = sys.argv[1] if len(sys.argv) > 1 else "memory-langgraph"
USER = ("users", "ana")


class State(TypedDict):
    message: str
    reply: str


def respond(state: State) -> State:
    store = get_store()
    text = state["message"]
    if text.startswith("I live in "):
        store.put(USER, "home", {"city": text.removeprefix("I live in ").rstrip(".")})
        return {"message": text, "reply": "Noted."}
    home = store.get(USER, "home")
    return {"message": text, "reply": f"You live in {home.value['city']}." if home else "I don't know yet."}


def graph(store: OstrakonStore):
    builder = StateGraph(State)
    builder.add_node("respond", respond)
    builder.add_edge(START, "respond")
    builder.add_edge("respond", END)
    return builder.compile(store=store)


with ostrakon.open(DATA) as memory:
    app = graph(OstrakonStore(memory))
    app.invoke({"message": "I live in Lisbon."})
    time.sleep(0.01)
    before_the_move = dt.datetime.now(dt.timezone.utc)
    time.sleep(0.01)
    app.invoke({"message": "I live in Porto."})

with ostrakon.open(DATA) as memory:  # a new process would see the same
    store = OstrakonStore(memory)
    print(graph(store).invoke({"message": "Where do I live?"})["reply"])
    print("as known before the move:", store.as_of(before_the_move).get(USER, "home").value["city"])
    print("history:", [item.value["city"] for item in store.history(USER, "home")])
