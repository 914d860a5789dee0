"""LlamaIndex's Memory with Ostrakon as its long-term block: what falls out of the chat
window is kept as episodes, and the next session's prompt carries what is relevant.
Run: python examples/llama_index_memory.py [DATA_DIR]"""

import sys

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory

import ostrakon
from ostrakon.llama_index import OstrakonMemoryBlock

DATA = sys.argv[1] if len(sys.argv) > 1 else "memory-llama-index"

with ostrakon.open(DATA) as client:
    block = OstrakonMemoryBlock(client=client, namespace="ana", budget=300)
    first = Memory.from_defaults(session_id="monday", token_limit=100, token_flush_size=30, memory_blocks=[block])
    first.put(ChatMessage(role="user", content="My daughter Inês starts violin lessons on Thursdays."))
    first.put(ChatMessage(role="assistant", content="Lovely! I'll remember the Thursday lessons."))
    for n in range(8):  # the chat goes on; the oldest messages leave the window
        first.put(ChatMessage(role="user", content=f"Small talk number {n} about the weather today."))

    # Another session: nothing in its window, the block brings the lessons back.
    later = Memory.from_defaults(session_id="friday", memory_blocks=[block])
    for message in later.get(input="Which day are Inês's violin lessons?"):
        if message.role.value == "system":
            print(message.content)
