"""The schema context of the SQL-writing prompts (plan, correct_values, refine, self_correct).

    builder = ContextBuilder(catalog, selection, values=values, rows=rows, token_budget=1500)
    context = builder.build("How many singers are from France?", ["concert_singer", "singer"], scores=[0.61, 0.55])
    context.text, context.tokens, context.to_dict()

For each candidate database it keeps the tables and columns that matter for the question, their DDL, a few relevant
example rows per kept table and the stored values the question's words link to, written next to their columns.
Tables are scored by the selection memory's table and column vectors (SelectionMemory.schema_scores), the words of
their names that the question uses and the values the question links to; a database further from the best
candidate scores lower. A table is kept when it scores within `table_margin` of the best table of all candidates,
and the foreign-key neighbours needed to join kept tables come with it. Under the token budget the lowest-scored
material goes first: example rows, then whole tables from the lowest score up. mode="full_ddl" gives every
candidate's full DDL instead (the ablation baseline).

Token counts are approximate, the same for every context: count_tokens() counts runs of up to 8 letters, runs of
up to 3 digits and single other non-space characters, roughly what a BPE tokenizer makes of SQL DDL.
"""
import re
from collections import deque
from dataclasses import dataclass, field

from .. import Error
from .schemas import schema_text

TOKEN = re.compile(r"[A-Za-z]{1,8}|[0-9]{1,3}|[^\sA-Za-z0-9]")
WORD = re.compile(r"[a-z0-9]+")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
STOPWORDS = frozenset("a an and are as at by did do does for from has have how in is it its many much of on or "
                      "that the their them there these this those to was were what when where which who whose with "
                      "all any each every find give list me name show tell".split())
MODES = ("built", "full_ddl")
NAME_WEIGHT = 0.3  # added to a table's or column's cosine per share of its name's words the question uses


def count_tokens(text):
    """The approximate token count of `text` (see the module's text)."""
    return len(TOKEN.findall(text))


@dataclass
class TableContext:
    name: str
    score: float
    columns: list          # kept column names, in table order
    rows: list = field(default_factory=list)   # relmem.rows.RowMatch
    reason: str = "score"  # "score", or "join" for a foreign-key neighbour kept to join kept tables


@dataclass
class DatabaseContext:
    database: str
    text: str
    tables: list              # TableContext of the kept tables, best first
    dropped: list             # names of the tables left out
    links: list               # relmem ValueLink objects written next to their columns


@dataclass
class SchemaContext:
    mode: str
    databases: list           # DatabaseContext, in candidate order
    budget: int

    @property
    def text(self):
        return "\n\n".join(d.text for d in self.databases)

    @property
    def tokens(self):
        return count_tokens(self.text)

    def database(self, name):
        """The DatabaseContext of `name`, or None when it is not a candidate."""
        return next((d for d in self.databases if d.database == name), None)

    def to_dict(self):
        """What the trace records: per database the kept tables (with their columns and row count), the dropped ones
        and the linked values; the token count."""
        return {"mode": self.mode, "tokens": self.tokens, "budget": self.budget,
                "databases": [{"database": d.database,
                               "tables": [{"table": t.name, "score": round(t.score, 4), "columns": t.columns,
                                           "rows": len(t.rows), **({"reason": t.reason} if t.reason != "score" else {})}
                                          for t in d.tables],
                               "dropped": d.dropped,
                               "values": [{"span": l.span, "column": f"{l.table}.{l.column}", "value": l.value}
                                          for l in d.links]}
                              for d in self.databases]}


class ContextBuilder:
    def __init__(self, catalog, selection, values=None, rows=None, descriptions=None, mode="built",
                 token_budget=2000, rows_per_table=1, table_margin=0.35, database_weight=2.0, max_columns=16,
                 value_links=8):
        """`selection`: the SelectionMemory (table and column scores); `values`: a ValueMemory or None (no linked
        values); `rows`: a RowMemory or None (no example rows). `token_budget`: most tokens of one context
        (count_tokens). `rows_per_table`: example rows per kept table. `table_margin`: tables scoring more than this
        below the best table of all candidates are left out. `database_weight`: how much a database's selection
        score gap to the best candidate lowers its tables' scores. `max_columns`: wider tables keep their
        best-scored columns (besides keys and linked columns). `value_links`: linked values per database at most."""
        if mode not in MODES:
            raise Error(f"unknown context mode '{mode}' (known: {', '.join(MODES)})")
        if token_budget < 1:
            raise Error(f"the context's token budget must be positive, not {token_budget}")
        self.catalog = catalog
        self.selection = selection
        self.values = values
        self.rows = rows
        self.descriptions = descriptions or {}
        self.mode = mode
        self.token_budget = token_budget
        self.rows_per_table = rows_per_table
        self.table_margin = table_margin
        self.database_weight = database_weight
        self.max_columns = max_columns
        self.value_links = value_links

    def build(self, question, databases, scores=None):
        """The SchemaContext of `databases` (best first) for `question`; `scores`: their selection scores (None:
        all equal)."""
        databases = list(databases)
        if self.mode == "full_ddl":
            return SchemaContext(self.mode, [self._full(db) for db in databases], self.token_budget)
        scores = list(scores) if scores is not None else [0.0] * len(databases)
        if len(scores) != len(databases):
            raise Error(f"{len(scores)} scores for {len(databases)} databases")
        best = max(scores, default=0.0)
        words = question_words(question)
        row_vector = self.rows.encode(question) if self.rows is not None else None
        links = self._links(question, databases)
        plans = [self._plan(question, words, s, self.database_weight * (best - score), row_vector, db_links)
                 for s, score, db_links in zip(self.selection.schema_scores(question, databases), scores, links)]
        top = max((t.score for plan in plans for t in plan.tables), default=0.0)
        for plan in plans:
            plan.keep(top - self.table_margin)
        self._fit(plans)
        return SchemaContext(self.mode, [plan.render() for plan in plans], self.token_budget)

    def build_one(self, question, database):
        """The context of one database (the correction prompts)."""
        return self.build(question, [database]).databases[0]

    def _full(self, db):
        text = schema_text(self.catalog, db, self.descriptions.get(db, ""))
        tables = [TableContext(t.name, 0.0, [c.name for c in t.columns]) for t in self.catalog.schema(db).tables]
        return DatabaseContext(db, text, tables, [], [])

    def _links(self, question, databases):
        """The stored values the question's words link to, per database (none without a value memory)."""
        if self.values is None:
            return [[] for _ in databases]
        known = [db for db in databases if db in self.values]
        found = dict(zip(known, self.values.link_all(known, question, k=self.value_links))) if known else {}
        return [found.get(db, []) for db in databases]

    def _plan(self, question, words, schema_scores, penalty, row_vector, links):
        db = schema_scores.database
        schema = self.catalog.schema(db)
        linked = {(l.table.lower(), l.column.lower()) for l in links}
        column_scores = iter(schema_scores.column_scores)
        dense_tables = dict(zip(schema_scores.tables, schema_scores.table_scores))
        tables = []
        for table in schema.tables:
            dense = dense_tables.get(table.name, 0.0)
            columns = []
            for column in table.columns:
                score = next(column_scores, dense) + NAME_WEIGHT * name_overlap(column.name, words)
                columns.append((column, score, (table.name.lower(), column.name.lower()) in linked))
            score = max([dense + NAME_WEIGHT * name_overlap(table.name, words)] + [s for _, s, _ in columns])
            tables.append(_ScoredTable(table, score - penalty, columns, any(l for _, _, l in columns)))
        rows = {}
        if self.rows is not None and db in self.rows and self.rows_per_table > 0:
            rows = self.rows.search_vector(db, row_vector, [t.table.name for t in tables], k=self.rows_per_table)
        return _DatabasePlan(db, schema, self.descriptions.get(db, ""), tables, links, rows, self.max_columns)

    def _fit(self, plans):
        """Drops the lowest-scored material until the contexts fit the budget: example rows first, then tables."""
        def total():
            return sum(count_tokens(plan.render().text) for plan in plans)
        if total() <= self.token_budget:
            return
        for plan in plans:
            plan.rows = {}
        while total() > self.token_budget:
            kept = [(t.score, plan, t) for plan in plans for t in plan.kept_tables() if not t.join]
            if len(kept) <= 1:
                return  # the best table stays whatever its size
            _, plan, table = min(kept, key=lambda item: item[0])
            plan.drop(table)


@dataclass
class _ScoredTable:
    table: object        # relmem Table
    score: float
    columns: list        # [(Column, score, whether a question value links to it)]
    linked: bool = False  # a question value links to one of its columns
    kept: bool = False
    join: bool = False   # kept only to join kept tables


class _DatabasePlan:
    def __init__(self, db, schema, description, tables, links, rows, max_columns):
        self.db = db
        self.schema = schema
        self.description = description
        self.tables = tables
        self.links = links
        self.rows = rows
        self.max_columns = max_columns
        self.by_name = {t.table.name: t for t in tables}

    def keep(self, threshold):
        """Keeps the tables scoring at least `threshold`, then the foreign-key neighbours that join them."""
        for table in self.tables:
            table.kept = table.score >= threshold or table.linked
        self._join()

    def drop(self, table):
        table.kept = False
        for t in self.tables:
            if t.join:
                t.kept = t.join = False
        self._join()

    def kept_tables(self):
        return [t for t in self.tables if t.kept]

    def _join(self):
        """Keeps the tables on a shortest foreign-key path between every two kept tables (marked `join`)."""
        kept = [t.table.name for t in self.tables if t.kept and not t.join]
        graph = foreign_key_graph(self.schema)
        for i, start in enumerate(kept):
            for goal in kept[i + 1:]:
                for name in shortest_path(graph, start, goal)[1:-1]:
                    middle = self.by_name[name]
                    if not middle.kept:
                        middle.kept = middle.join = True

    def render(self):
        kept = sorted(self.kept_tables(), key=lambda t: -t.score)
        kept_names = {t.table.name for t in kept}
        links_by_column = {}
        for link in self.links:
            links_by_column.setdefault((link.table.lower(), link.column.lower()), []).append(link)
        head = f"Database: {self.db}" + (f"\n-- {self.description}" if self.description else "")
        parts, contexts = [head], []
        for scored in kept:
            columns = self._columns(scored)
            parts.append(table_ddl(scored.table, columns, kept_names, links_by_column))
            rows = self.rows.get(scored.table.name, [])
            if rows:
                parts.append(rows_text(scored.table.name, columns, rows))
            contexts.append(TableContext(scored.table.name, scored.score, [c.name for c in columns], rows,
                                         "join" if scored.join else "score"))
        shown = [l for l in self.links if l.table in kept_names]
        dropped = [t.table.name for t in self.tables if not t.kept]
        return DatabaseContext(self.db, "\n".join(parts), contexts, dropped, shown)

    def _columns(self, scored):
        """The table's columns to show: keys and foreign keys always, the rest by score up to max_columns."""
        keys = {fk.from_column for fk in scored.table.foreign_keys}
        must = {i for i, (c, _, linked) in enumerate(scored.columns) if c.primary_key or c.name in keys or linked}
        rest = sorted([(s, i) for i, (_, s, _) in enumerate(scored.columns) if i not in must], reverse=True)
        chosen = must | {i for _, i in rest[:max(0, self.max_columns - len(must))]}
        return [c for i, (c, _, _) in enumerate(scored.columns) if i in chosen]


def question_words(question):
    return {singular(w) for w in WORD.findall(question.lower()) if w not in STOPWORDS}


def name_words(name):
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return [singular(w) for w in WORD.findall(spaced.lower())]


def singular(word):
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def name_overlap(name, words):
    """The share of a table's or column's name words that the question uses."""
    parts = name_words(name)
    return sum(p in words for p in parts) / len(parts) if parts else 0.0


def foreign_key_graph(schema):
    graph = {t.name: set() for t in schema.tables}
    for table in schema.tables:
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


def sql_value(value):
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def table_ddl(table, columns, kept_names, links_by_column):
    """CREATE TABLE with the shown columns, the primary key and the foreign keys to kept tables; the stored values
    the question links to follow their column as a comment."""
    keys = [c.name for c in table.columns if c.primary_key]
    lines = []
    for column in columns:
        line = f"  {quote_name(column.name)} {column.type}".rstrip()
        if keys == [column.name]:
            line += " PRIMARY KEY"
        links = links_by_column.get((table.name.lower(), column.name.lower()), [])
        lines.append((line, links))
    if len(keys) > 1:
        lines.append((f"  PRIMARY KEY ({', '.join(quote_name(k) for k in keys)})", []))
    shown = {c.name for c in columns}
    for fk in table.foreign_keys:
        if fk.from_column in shown and any(fk.to_table.lower() == k.lower() for k in kept_names):
            lines.append((f"  FOREIGN KEY ({quote_name(fk.from_column)}) REFERENCES {quote_name(fk.to_table)}"
                          f"({quote_name(fk.to_column)})", []))
    body = []
    for i, (line, links) in enumerate(lines):
        line += "," if i < len(lines) - 1 else ""
        if links:
            line += " -- question values: " + ", ".join(f"{sql_value(l.value)} (\"{l.span}\")" for l in links)
        body.append(line)
    return f"CREATE TABLE {quote_name(table.name)} (\n" + "\n".join(body) + "\n);"


def rows_text(table, columns, rows):
    names = [c.name for c in columns]
    lines = [f"/* {len(rows)} example row{'s' if len(rows) > 1 else ''} of {quote_name(table)} "
             f"({', '.join(quote_name(n) for n in names)}):"]
    for row in rows:
        values = row.as_dict()
        lines.append("(" + ", ".join(sql_value(values.get(n)) for n in names) + ")")
    return "\n".join(lines) + " */"
