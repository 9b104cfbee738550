"""What the pipeline tests share: the demo collection with hashing-encoder memories, and replies in the formats the
stage prompts ask for. Test modules import the fixtures by name."""
import pytest

import relmem
from relmem.agent import Memories
from relmem.demo.collection import DESCRIPTIONS


def plan(*targets):
    """A plan reply: one (goal, sql, database) per target."""
    return "\n".join(f"Goal: {goal}\nBegin SQL\n{sql}\nEnd SQL\nDatabase: {db}" for goal, sql, db in targets)


def sql_block(sql):
    return f"Begin SQL\n{sql}\nEnd SQL"


@pytest.fixture(scope="module")
def catalog(demo_dir):
    return relmem.Catalog(str(demo_dir))


@pytest.fixture(scope="module")
def memories(catalog):
    return Memories.build(catalog, encoder="hashing", descriptions=DESCRIPTIONS)
