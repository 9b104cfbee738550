"""What the context builder needs of one database's schema, read once per database and reused for every question:
tables and columns as plain Python objects (each pybind11 access of a relmem Table copies its lists), the words of
their names, the lines of their DDL, and the foreign-key graph with its shortest paths.

    schema = DatabaseSchema.read(catalog, "concert_singer")
    schema.tables[0].columns[0].line        # '  "Singer_ID" int PRIMARY KEY' as the context writes it
    schema.path("singer", "concert")        # ['singer', 'singer_in_concert', 'concert']
"""
import re
from collections import deque
from dataclasses import dataclass
from functools import lru_cache

from .._relmem import WordNet

WORD = re.compile(r"[a-z0-9]+")
CAMEL = re.compile(r"([a-z])([A-Z])")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
STOPWORDS = frozenset("a an and are as at by did do does for from has have how in is it its many much of on or "
                      "that the their them there these this those to was were what when where which who whose with "
                      "all any each every find give list me name show tell".split())


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: str
    primary_key: bool
    words: tuple    # name_words(name)
    line: str       # its line of the CREATE TABLE, without the comma


@dataclass(frozen=True)
class ForeignKeyInfo:
    from_column: str
    to_table: str   # the referenced table as the schema spells it (as declared when no table has that name)
    to_column: str
    line: str       # its FOREIGN KEY line of the CREATE TABLE


@dataclass(frozen=True)
class TableInfo:
    name: str
    columns: tuple        # ColumnInfo, in table order
    foreign_keys: tuple   # ForeignKeyInfo
    words: tuple          # name_words(name)
    key_line: str         # the PRIMARY KEY (...) line of a composite key, else ""
    key_columns: frozenset  # primary key and foreign key columns
    first: int            # the position of its first column among all the database's columns


class DatabaseSchema:
    def __init__(self, name, tables):
        self.name = name
        self.tables = tables
        self.columns = sum(len(t.columns) for t in tables)
        self.by_name = {t.name: t for t in tables}
        self.positions = {(t.name.lower(), c.name.lower()): t.first + i  # a column's position among all columns
                          for t in tables for i, c in enumerate(t.columns)}
        self.graph = foreign_key_graph(tables)
        self.parents = {t.name: sorted({self._resolve(fk.to_table) for fk in t.foreign_keys} - {None, t.name})
                        for t in tables}  # the tables each table's foreign keys reference
        self._paths = {}
        # word -> [(table position or -1 - column position, share of that name's words it is)]
        self._names = {}
        for i, table in enumerate(tables):
            self._index_name(i, table.words)
            for j, column in enumerate(table.columns):
                self._index_name(-1 - (table.first + j), column.words)

    def _resolve(self, name):
        """The schema's spelling of a table a foreign key names (SQLite matches names ignoring case); None if none."""
        return next((t.name for t in self.tables if t.name.lower() == name.lower()), None)

    def _index_name(self, position, words):
        for word in set(words):
            self._names.setdefault(word, []).append((position, words.count(word) / len(words)))

    def name_overlaps(self, words):
        """({table position: share}, {column position: share}): the share of each name's words (name_words) that
        `words` (question_words) holds, for the names that share any."""
        tables, columns = {}, {}
        for word in words:
            for position, share in self._names.get(word, ()):
                if position >= 0:
                    tables[position] = tables.get(position, 0.0) + share
                else:
                    columns[-1 - position] = columns.get(-1 - position, 0.0) + share
        return tables, columns

    @classmethod
    def read(cls, catalog, db):
        tables, first = [], 0
        for table in catalog.schema(db).tables:
            tables.append(_table_info(table, first))
            first += len(tables[-1].columns)
        return cls(db, tuple(tables))

    def path(self, start, goal):
        """Table names on a shortest foreign-key path from start to goal (both included); [] when not connected."""
        if (start, goal) not in self._paths:
            self._paths[start, goal] = shortest_path(self.graph, start, goal)
        return self._paths[start, goal]


def _table_info(table, first):
    keys = [c.name for c in table.columns if c.primary_key]
    columns = tuple(ColumnInfo(c.name, c.type, c.primary_key, tuple(name_words(c.name)),
                               f"  {quote_name(c.name)} {c.type}".rstrip() + (" PRIMARY KEY" if keys == [c.name] else
                                                                              ""))
                    for c in table.columns)
    foreign_keys = tuple(ForeignKeyInfo(fk.from_column, fk.to_table, fk.to_column,
                                        f"  FOREIGN KEY ({quote_name(fk.from_column)}) REFERENCES "
                                        f"{quote_name(fk.to_table)}({quote_name(fk.to_column)})")
                         for fk in table.foreign_keys)
    key_line = f"  PRIMARY KEY ({', '.join(quote_name(k) for k in keys)})" if len(keys) > 1 else ""
    return TableInfo(table.name, columns, foreign_keys, tuple(name_words(table.name)), key_line,
                     frozenset(keys) | {fk.from_column for fk in foreign_keys}, first)


def question_words(question):
    """The question's words in name_words' form; a past participle also as its two possible stems ("liked": "like",
    "lik"; "played": "playe", "play") to meet a name's present form; and what an adjective measures ("the tallest
    player": "stature", "height"; WordNet.attributes, when WordNet is installed)."""
    words = set()
    for word in WORD.findall(question.lower()):
        if word not in STOPWORDS:
            words.add(singular(word))
            if len(word) > 4 and word.endswith("ed"):
                words.update((word[:-1], word[:-2]))
            words.update(attribute_words(word))
    return words


@lru_cache(maxsize=65536)
def attribute_words(word):
    """The one-word nouns of what the adjective `word` measures, in name_words' form ("oldest": ("age",))."""
    wordnet = WordNet.shared()
    if wordnet is None:
        return ()
    return tuple(singular(noun) for noun in wordnet.attributes(word) if WORD.fullmatch(noun))


def name_words(name):
    return [singular(w) for w in WORD.findall(CAMEL.sub(r"\1 \2", name).lower())]


def singular(word):
    """The rules of the C++ core's stem_token: "cities" -> "city", "matches" -> "match", "players" -> "player"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def foreign_key_graph(tables):
    graph = {t.name: set() for t in tables}
    for table in tables:
        for fk in table.foreign_keys:
            target = next((name for name in graph if name.lower() == fk.to_table.lower()), None)
            if target is not None and target != table.name:
                graph[table.name].add(target)
                graph[target].add(table.name)
    return graph


def shortest_path(graph, start, goal):
    """Table names from start to goal along foreign keys (both ends included); [] when they are not connected."""
    previous = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = []
            while node is not None:
                path.append(node)
                node = previous[node]
            return path[::-1]
        for neighbour in sorted(graph[node]):
            if neighbour not in previous:
                previous[neighbour] = node
                queue.append(neighbour)
    return []


def quote_name(name):
    return name if IDENTIFIER.fullmatch(name) else '"' + name.replace('"', '""') + '"'
