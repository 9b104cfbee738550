"""Support for the MCP tests: `relmem serve` as a stdio subprocess, the demo memories, and a scripted client-side LLM
for sampling."""
import os
import sys

from relmem.mcp.client import StdioClient

SERVE = [sys.executable, "-m", "relmem.cli", "serve"]


def serve(*args, env=None, cwd=None):
    """A stdio client of `relmem serve ARGS`, run by this Python."""
    return StdioClient(SERVE + list(args), env={**os.environ, **(env or {})}, cwd=cwd)


def build_demo_memory(demo_dir, folder):
    """The demo collection's memories (hashing encoder: quick and deterministic) saved into `folder`."""
    import relmem
    from relmem.agent import Memories
    from relmem.demo.collection import DESCRIPTIONS
    Memories.build(relmem.Catalog(str(demo_dir)), encoder="hashing", descriptions=DESCRIPTIONS).save(str(folder))
    return folder


LA_QUESTION = "What is the average rating of Italian restaurants in Los Angeles?"
LA_SQL = "SELECT AVG(rating) FROM restaurant WHERE food_type = 'Italian' AND city = 'Los Angeles'"


def play_llm(params):
    """The client's LLM in sampling tests: answers each relmem stage as a scripted model would."""
    replies = {
        "context_switch": "Reasoning: this needs stored records.\nAnswer: (YES)",
        "plan": f"Goal: average rating\nBegin SQL\n{LA_SQL}\nEnd SQL\nDatabase: restaurants",
        "correct_values": "Begin SQL\n" + LA_SQL.replace("'Los Angeles'", "'LA'") + "\nEnd SQL",
        "return_type": "Return type: (SQL)",
    }
    stage = params.get("metadata", {}).get("relmem_stage", "")
    return {"role": "assistant", "content": {"type": "text", "text": replies.get(stage, "(YES)")},
            "model": "scripted-test-llm", "stopReason": "endTurn"}
