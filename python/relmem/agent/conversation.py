"""Conversation memory: the finished turns of a conversation, the last few of which go into the next question."""
from .state import Turn


class ConversationMemory:
    """Keeps every turn; recent(n) gives the last n, oldest first."""

    def __init__(self, turns=None):
        self.turns = list(turns or [])

    def add(self, turn):
        self.turns.append(turn)

    def add_state(self, state):
        """Remembers a finished question: its (rephrased) question, answer and the queries that ran."""
        self.add(Turn(state.standalone_question, state.answer or "",
                      [(t.database, t.sql) for t in state.targets if t.ok]))

    def recent(self, n):
        return self.turns[-n:] if n > 0 else []

    def clear(self):
        self.turns.clear()

    def __len__(self):
        return len(self.turns)


def conversation_text(turns):
    """Earlier turns for a prompt, oldest first; '' when there are none."""
    blocks = []
    for number, turn in enumerate(turns, start=1):
        lines = [f"Turn {number} question: {turn.question}"]
        lines += [f"SQL on {database}: {sql}" for database, sql in turn.queries]
        lines.append(f"Answer: {turn.answer}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
