"""The name a table goes by at one place of a SQL statement: BlendSQL's 'temp::c' sitting in a SELECT whose FROM
reads `temp AS T1` must be written T1.c there, since SQLite no longer knows the table's own name in that scope."""
import re

_TOKEN = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]|\w+|\S""")
_FROM_ENDS = {"where", "group", "order", "limit", "having", "window", "union", "intersect", "except"}
_NOT_ALIAS = _FROM_ENDS | {"on", "using", "join", "inner", "left", "right", "full", "outer", "cross", "natural",
                           "as", "select", "from", "offset", "indexed", "not"}
_COMPOUND = {"union", "intersect", "except"}


def _name(token):
    return token[1:-1] if token[:1] in "\"`[" else token


def _is_identifier(token):
    return token[:1] in "\"`[" or re.fullmatch(r"\w+", token) is not None


class Scopes:
    """Tokens of `sql` with their nesting, to ask which tables a position's SELECT reads and under which names."""

    def __init__(self, sql):
        self.tokens = [(m.start(), m.group(0)) for m in _TOKEN.finditer(sql)]
        self.depth, self.close = [], {}
        stack = []
        for i, (_, text) in enumerate(self.tokens):
            if text == ")" and stack:
                self.close[stack.pop()] = i
            self.depth.append(len(stack))
            if text == "(":
                stack.append(i)

    def _index_at(self, position):
        for i, (start, _) in enumerate(self.tokens):
            if start >= position:
                return i
        return len(self.tokens) - 1

    def _level(self, begin, end, depth):
        return [i for i in range(begin, end) if self.depth[i] == depth]

    def _select_segment(self, index):
        """Indexes of the tokens, at their own level, of the innermost SELECT holding token `index` (one arm of a
        compound SELECT)."""
        opens = [i for i in range(index) if self.tokens[i][1] == "(" and self.close.get(i, len(self.tokens)) > index]
        for begin, end, depth in [(o + 1, self.close.get(o, len(self.tokens)), self.depth[o] + 1)
                                  for o in reversed(opens)] + [(0, len(self.tokens), 0)]:
            level = self._level(begin, end, depth)
            if any(self.tokens[i][1].lower() == "select" for i in level):
                cuts = [i for i in level if self.tokens[i][1].lower() in _COMPOUND]
                low = max([c for c in cuts if c < index], default=begin - 1)
                high = min([c for c in cuts if c > index], default=end)
                return [i for i in level if low < i < high]
        return []

    def tables_at(self, position):
        """{table name lowercased: alias or None} and the aliases, as the FROM clause around `position` reads
        them."""
        tables, aliases = {}, set()
        level = self._select_segment(self._index_at(position))
        words = [self.tokens[i][1] for i in level]
        in_from, expect_table = False, False
        k = 0
        while k < len(words):
            word = words[k].lower()
            if word in ("from", "join"):
                in_from, expect_table = True, True
            elif word in _FROM_ENDS:
                in_from = False
            elif in_from and word == ",":
                expect_table = True
            elif expect_table and _is_identifier(words[k]):
                table, alias = _name(words[k]), None
                after = k + 1
                if after < len(words) and words[after].lower() == "as":
                    after += 1
                if after < len(words) and _is_identifier(words[after]) and words[after].lower() not in _NOT_ALIAS:
                    alias = _name(words[after])
                    aliases.add(alias.lower())
                    k = after
                if table.lower() not in tables or alias is None:
                    tables[table.lower()] = alias
                expect_table = False
            else:
                expect_table = False
            k += 1
        return tables, aliases

    def name_at(self, position, table):
        """How `table` is written at `position`: its alias when the FROM clause there renames it, else itself."""
        tables, aliases = self.tables_at(position)
        if table.lower() in aliases:
            return table
        return tables.get(table.lower()) or table
