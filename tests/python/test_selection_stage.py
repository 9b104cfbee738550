"""The selection stage's candidates: the top K, or those of the selection memory's calibrated set."""
from types import SimpleNamespace

import pytest

import relmem
from relmem.agent import State
from relmem.agent.config import PipelineConfig
from relmem.agent.stages.selection import SelectDatabases


class RankedSelection:
    """A selection memory's answers for one question: its ranking, and its calibrated set."""

    def __init__(self, ranking, chosen):
        self.ranking = [SimpleNamespace(database=db, score=1.0 - i / 10, probability=0.9 - i / 10)
                        for i, db in enumerate(ranking)]
        self.chosen = chosen
        self.parts_asked = None

    def select(self, question, k):
        return self.ranking[:k]

    def select_set(self, question):
        return [m for m in self.ranking if m.database in self.chosen]

    def select_parts(self, parts, k):
        self.parts_asked = parts
        return self.ranking[:k]

    def select_set_parts(self, parts):
        return self.select_set(" ".join(parts))


def candidates(selection, question_parts=(), **config):
    state = State("How many singers are there?")
    state.question_parts = list(question_parts)
    SelectDatabases(selection, PipelineConfig(**config)).run(state)
    return [c.database for c in state.candidates]


def test_top_k_gives_every_ranked_database():
    selection = RankedSelection(["singers", "concerts", "pets", "cars", "flights", "shops"], {"singers"})
    assert candidates(selection, top_k=5) == ["singers", "concerts", "pets", "cars", "flights"]


def test_selected_keeps_the_calibrated_set_in_rank_order_within_the_top_k():
    selection = RankedSelection(["singers", "concerts", "pets", "cars", "flights", "shops"],
                                {"flights", "concerts", "shops"})
    assert candidates(selection, top_k=5, candidates="selected") == ["singers", "concerts", "flights"]


def test_selected_keeps_the_first_database_when_the_set_is_empty():
    selection = RankedSelection(["singers", "concerts", "pets"], set())
    assert candidates(selection, top_k=3, candidates="selected") == ["singers"]


def test_selected_asks_for_the_set_of_the_question_parts():
    selection = RankedSelection(["singers", "concerts", "pets"], {"pets"})
    assert candidates(selection, ["How many singers?", "How many pets?"], top_k=3,
                      candidates="selected") == ["singers", "pets"]
    assert selection.parts_asked == ["How many singers?", "How many pets?"]


def test_an_unknown_candidates_setting_is_an_error():
    with pytest.raises(relmem.Error, match="unknown candidates setting 'all'"):
        PipelineConfig(candidates="all")
