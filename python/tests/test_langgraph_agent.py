"""An agent built the way LangGraph builds them (`create_react_agent` with a store) writes a
memory in one conversation and recalls it in another, after the store was closed and
opened again, through OstrakonStore. The chat model is a deterministic fake from
langchain_core: it calls a tool for each user message and answers with what the tool
returned, so the answer can only hold the memory if the store gave it back."""

from __future__ import annotations

import uuid
import warnings


import ostrakon
from conftest import framework

framework("langgraph", "langgraph")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.config import get_store

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

from ostrakon.langgraph import OstrakonStore

USER = ("memories", "ana")


@tool
def save_memory(text: str) -> str:
    """Keep a fact about the user for later conversations."""
    get_store().put(USER, uuid.uuid4().hex, {"text": text})
    return "saved"


@tool
def recall_memory(query: str) -> str:
    """Find what was kept about the user."""
    found = get_store().search(USER, query=query, limit=3)
    return "\n".join(item.value["text"] for item in found) or "nothing found"


class ToolCallingFake(GenericFakeChatModel):
    """Calls `save_memory` for "remember: …", `recall_memory` for a question, and answers
    with the last tool result."""

    messages: object = iter(())

    def bind_tools(self, tools, **kwargs):  # noqa: ANN001 - the model ignores the schemas
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # noqa: ANN001
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=f"From memory: {last.content}")
        else:
            text = str(last.content)
            name, args = (
                ("save_memory", {"text": text.removeprefix("remember:").strip()})
                if text.startswith("remember:")
                else ("recall_memory", {"query": text})
            )
            reply = AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": uuid.uuid4().hex}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def agent(store: OstrakonStore):
    with warnings.catch_warnings():  # moved to `langchain.agents` in LangGraph 1.0, still there
        warnings.simplefilter("ignore")
        return create_react_agent(ToolCallingFake(), [save_memory, recall_memory], store=store)


def test_an_agent_remembers_across_conversations_and_restarts(tmp_path):
    with ostrakon.open(tmp_path / "agent") as client:
        first = agent(OstrakonStore(client))
        result = first.invoke({"messages": [HumanMessage("remember: Ana's favourite colour is green")]})
        assert result["messages"][-1].content == "From memory: saved"
        first.invoke({"messages": [HumanMessage("remember: Ana works as a nurse in Lisbon")]})

    with ostrakon.open(tmp_path / "agent") as client:
        store = OstrakonStore(client)
        answer = agent(store).invoke({"messages": [HumanMessage("What is Ana's favourite colour?")]})
        assert "Ana's favourite colour is green" in answer["messages"][-1].content
        work = agent(store).invoke({"messages": [HumanMessage("Where does Ana work as a nurse?")]})
        assert work["messages"][-1].content.splitlines()[0] == "From memory: Ana works as a nurse in Lisbon"
        # The memories are items of the store, readable without the agent.
        texts = sorted(item.value["text"] for item in store.search(USER, limit=10))
        assert texts == ["Ana works as a nurse in Lisbon", "Ana's favourite colour is green"]


def test_an_agent_over_http(server):
    with ostrakon.connect(server) as client:
        store = OstrakonStore(client)
        agent(store).invoke({"messages": [HumanMessage("remember: Bea plays the cello")]})
        answer = agent(store).invoke({"messages": [HumanMessage("Which instrument does Bea play? the cello?")]})
        assert "Bea plays the cello" in answer["messages"][-1].content
