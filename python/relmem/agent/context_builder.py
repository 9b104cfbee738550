"""The schema context of the SQL-writing prompts (plan, correct_values, refine, self_correct).

    builder = ContextBuilder(catalog, selection, values=values, rows=rows, token_budget=1500)
    context = builder.build("How many singers are from France?", ["concert_singer", "singer"], scores=[0.61, 0.55])
    context.text, context.tokens, context.to_dict()

For each candidate database it keeps the tables and columns that matter for the question, their DDL, a few relevant
example rows per kept table and the stored values the question's words link to, written next to their columns.
Tables are scored by the selection memory's table and column vectors (SelectionMemory.schema_scores), the words of
their names that the question uses and the values the question links to; a database further from the best candidate
scores lower. A table is kept when it scores within `table_margin` of the best table of all candidates; the tables a
kept table's foreign keys reference come with it when they score within `parent_margin` ("the names of poker
players" are in `people`) or hold a column the question names other than a key ("the tallest poker player":
`people.Height`), and so do the foreign-key neighbours needed to join kept tables. Every candidate shows at least its
`min_tables` best tables, so that the planner can still choose a database the selection ranked lower. A question of
several parts (relmem's question_parts) also keeps, per part, the tables within `table_margin` of that part's best
table, and gets the token budget once per part. Under the token budget the lowest-scored material goes first:
example rows, then whole tables from the lowest score up. mode="full_ddl" gives every candidate's full DDL instead
(the ablation baseline). Token counts are approximate, the same for every context: count_tokens() counts runs of up
to 8 letters, runs of up to 3 digits and single other non-space characters, roughly what a BPE tokenizer makes of SQL
DDL.
"""
import re
from dataclasses import dataclass, field

from .. import Error
from .._relmem import question_parts
from .context_schema import DatabaseSchema, quote_name, question_words
from .schemas import schema_text

TOKEN = re.compile(r"[A-Za-z]{1,8}|[0-9]{1,3}|[^\sA-Za-z0-9]")
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
    reason: str = "score"  # or "join": kept to join kept tables; "parent": a kept table's foreign key references it;
    #                        "best": one of the database's min_tables best, kept whatever it scores


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
                 token_budget=2000, rows_per_table=1, table_margin=0.45, parent_margin=0.5, database_weight=2.0,
                 max_columns=16, value_links=8, min_tables=1):
        """`selection`: the SelectionMemory (table and column scores); `values`: a ValueMemory or None (no linked
        values); `rows`: a RowMemory or None (no example rows). `token_budget`: most tokens of one context
        (count_tokens), per part of the question. `rows_per_table`: example rows per kept table. `table_margin`: tables
        scoring more than this below the best table of all candidates are left out, except the tables a kept table's
        foreign keys reference when they score within `parent_margin` of the best, and each database's `min_tables`
        best tables whatever they score (0: none). `database_weight`: how much a
        database's selection score gap to the best candidate lowers its tables' scores. `max_columns`: wider tables keep
        their best-scored columns (besides keys and linked columns). `value_links`: linked values per database at
        most."""
        if mode not in MODES:
            raise Error(f"unknown context mode '{mode}' (known: {', '.join(MODES)})")
        if min_tables < 0:
            raise Error(f"min_tables must be at least 0, not {min_tables}")
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
        self.parent_margin = parent_margin
        self.database_weight = database_weight
        self.max_columns = max_columns
        self.value_links = value_links
        self.min_tables = min_tables
        self._schemas = {}  # database -> DatabaseSchema, read on first use (a Catalog's schemas do not change)

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
        penalties = [self.database_weight * (best - score) for score in scores]
        plans = [self._plan(words, s, penalty, db_links)
                 for s, penalty, db_links in zip(self.selection.schema_scores(question, databases), penalties, links)]
        parts = question_parts(question)
        if len(parts) > 1:
            self._mark_part_tables(parts, databases, penalties, plans)
        top = max((t.score for plan in plans for t in plan.tables), default=0.0)
        for plan in plans:
            plan.keep(top - self.table_margin, top - self.parent_margin, self.min_tables)
            self._add_rows(plan, row_vector)
        budget = self.token_budget * len(parts)
        self._fit(plans, budget)
        return SchemaContext(self.mode, [plan.render() for plan in plans], budget)

    def build_one(self, question, database):
        """The context of one database (the correction prompts)."""
        return self.build(question, [database]).databases[0]

    def schema(self, db):
        """The DatabaseSchema of `db` (see relmem.agent.context_schema), read once."""
        if db not in self._schemas:
            self._schemas[db] = DatabaseSchema.read(self.catalog, db)
        return self._schemas[db]

    def _full(self, db):
        text = schema_text(self.catalog, db, self.descriptions.get(db, ""))
        tables = [TableContext(t.name, 0.0, [c.name for c in t.columns]) for t in self.schema(db).tables]
        return DatabaseContext(db, text, tables, [], [])

    def _links(self, question, databases):
        """The stored values the question's words link to, per database (none without a value memory)."""
        if self.values is None:
            return [[] for _ in databases]
        known = [db for db in databases if db in self.values]
        found = dict(zip(known, self.values.link_all(known, question, k=self.value_links))) if known else {}
        return [found.get(db, []) for db in databases]

    def _plan(self, words, schema_scores, penalty, links):
        """Scores every table and column of one candidate: cosine with the question plus NAME_WEIGHT x the share of
        its name's words the question uses; a table scores its best column when that is higher."""
        schema = self.schema(schema_scores.database)
        linked = {schema.positions[key] for key in ((l.table.lower(), l.column.lower()) for l in links)
                  if key in schema.positions}
        dense_tables = dict(zip(schema_scores.tables, schema_scores.table_scores))
        column_scores = schema_scores.column_scores
        if len(column_scores) != schema.columns:  # a database added from vectors has no column rows
            column_scores = [dense_tables.get(t.name, 0.0) for t in schema.tables for _ in t.columns]
        table_names, column_names = schema.name_overlaps(words)
        for position, share in column_names.items():
            column_scores[position] += NAME_WEIGHT * share
        tables = []
        for i, table in enumerate(schema.tables):
            scores = column_scores[table.first:table.first + len(table.columns)]
            score = dense_tables.get(table.name, 0.0) + NAME_WEIGHT * table_names.get(i, 0.0)
            marked = {p - table.first for p in linked if table.first <= p < table.first + len(table.columns)}
            named = any(column_names.get(table.first + i, 0.0) >= 1.0 for i, c in enumerate(table.columns)
                        if c.name not in table.key_columns)
            tables.append(_ScoredTable(table, max([score] + scores) - penalty, scores, marked, named=named))
        return _DatabasePlan(schema, self.descriptions.get(schema.name, ""), tables, links, self.max_columns)

    def _mark_part_tables(self, parts, databases, penalties, plans):
        """A question of several parts (question_parts: "Q1: ...; Q2: ...", sentences) is scored whole, where one
        part's tables can outscore another's: the tables within `table_margin` of the best table for a part are kept
        too."""
        for part in parts:
            words = question_words(part)
            scored = [self._plan(words, s, penalty, []).tables
                      for s, penalty in zip(self.selection.schema_scores(part, databases), penalties)]
            threshold = max((t.score for tables in scored for t in tables), default=0.0) - self.table_margin
            for plan, tables in zip(plans, scored):
                for table, for_part in zip(plan.tables, tables):
                    table.part |= for_part.score >= threshold

    def _add_rows(self, plan, row_vector):
        """The example rows of the plan's kept tables most similar to the question."""
        if self.rows is None or plan.db not in self.rows or self.rows_per_table <= 0:
            return
        plan.show_rows(self.rows.search_vector(plan.db, row_vector, [t.table.name for t in plan.kept_tables()],
                                               k=self.rows_per_table))

    def _fit(self, plans, budget):
        """Drops the lowest-scored material until the contexts fit the budget: example rows first, then tables."""
        def total():
            return sum(plan.tokens() for plan in plans)
        if total() <= budget:
            return
        for plan in plans:
            plan.show_rows({})
        while total() > budget:
            kept = [(t.score, plan, t) for plan in plans for t in plan.kept_tables() if not t.join]
            # The best table stays whatever its size, and so do each database's min_tables best.
            droppable = [item for item in kept if sum(p is item[1] for _, p, _ in kept) > self.min_tables]
            if len(kept) <= 1 or not droppable:
                return
            _, plan, table = min(droppable, key=lambda item: item[0])
            plan.drop(table)


@dataclass
class _ScoredTable:
    table: object        # context_schema.TableInfo
    score: float
    column_scores: list  # one per column of the table
    linked: set          # the positions of the columns a question value links to
    kept: bool = False
    join: bool = False   # kept only to join kept tables
    part: bool = False   # scores within the table margin of the best table for one part of the question
    parent: bool = False  # kept as the table a kept table's foreign key references
    best: bool = False    # kept only as one of the database's min_tables best
    named: bool = False   # the question names one of its columns other than keys (every word of the name)


class _DatabasePlan:
    def __init__(self, schema, description, tables, links, max_columns):
        self.db = schema.name
        self.schema = schema
        self.description = description
        self.tables = tables
        self.links = links
        self.rows = {}
        self.max_columns = max_columns
        self.by_name = {t.table.name: t for t in tables}
        self._rendered = None  # (DatabaseContext, tokens) until the kept material changes

    def keep(self, threshold, parent_threshold, min_tables):
        """Keeps the tables scoring at least `threshold` (or holding a linked value) and at least the `min_tables`
        best, the tables their foreign keys reference that score at least `parent_threshold` ("the names of poker
        players" are in `people`) or hold a column the question names, then the foreign-key neighbours that join
        them."""
        for table in self.tables:
            table.kept = table.score >= threshold or table.part or bool(table.linked)
        for table in sorted(self.tables, key=lambda t: -t.score)[:min_tables]:
            table.best = not table.kept
            table.kept = True
        for table in [t for t in self.tables if t.kept]:
            for name in self.schema.parents[table.table.name]:
                parent = self.by_name[name]
                if not parent.kept and (parent.score >= parent_threshold or parent.named):
                    parent.kept = parent.parent = True
        self._join()

    def drop(self, table):
        table.kept = False
        for t in self.tables:
            if t.join:
                t.kept = t.join = False
        self._join()

    def show_rows(self, rows):
        """{table: [RowMatch]} the example rows to show."""
        self.rows = rows
        self._rendered = None

    def kept_tables(self):
        return [t for t in self.tables if t.kept]

    def _join(self):
        """Keeps the tables on a shortest foreign-key path between every two kept tables (marked `join`)."""
        self._rendered = None
        kept = [t.table.name for t in self.tables if t.kept and not t.join]
        for i, start in enumerate(kept):
            for goal in kept[i + 1:]:
                for name in self.schema.path(start, goal)[1:-1]:
                    middle = self.by_name[name]
                    if not middle.kept:
                        middle.kept = middle.join = True

    def tokens(self):
        self.render()
        return self._rendered[1]

    def render(self):
        if self._rendered is None:
            context = self._render()
            self._rendered = context, count_tokens(context.text)
        return self._rendered[0]

    def _render(self):
        kept = sorted(self.kept_tables(), key=lambda t: -t.score)
        kept_names = {t.table.name for t in kept}
        kept_lower = {name.lower() for name in kept_names}
        links_by_column = {}
        for link in self.links:
            links_by_column.setdefault((link.table.lower(), link.column.lower()), []).append(link)
        head = f"Database: {self.db}" + (f"\n-- {self.description}" if self.description else "")
        parts, contexts = [head], []
        for scored in kept:
            columns = self._columns(scored)
            parts.append(table_ddl(scored.table, columns, kept_lower, links_by_column))
            rows = self.rows.get(scored.table.name, [])
            if rows:
                parts.append(rows_text(scored.table.name, columns, rows))
            contexts.append(TableContext(scored.table.name, scored.score, [c.name for c in columns], rows,
                                         "join" if scored.join else "parent" if scored.parent else
                                         "best" if scored.best else "score"))
        shown = [l for l in self.links if l.table in kept_names]
        dropped = [t.table.name for t in self.tables if not t.kept]
        return DatabaseContext(self.db, "\n".join(parts), contexts, dropped, shown)

    def _columns(self, scored):
        """The table's columns to show: keys and foreign keys always, the rest by score up to max_columns."""
        columns = scored.table.columns
        if len(columns) <= self.max_columns:
            return list(columns)
        keys = scored.table.key_columns
        must = {i for i, c in enumerate(columns) if c.name in keys or i in scored.linked}
        rest = sorted([(s, i) for i, s in enumerate(scored.column_scores) if i not in must], reverse=True)
        chosen = must | {i for _, i in rest[:max(0, self.max_columns - len(must))]}
        return [c for i, c in enumerate(columns) if i in chosen]


def sql_value(value):
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def table_ddl(table, columns, kept_lower, links_by_column):
    """CREATE TABLE with the shown columns (context_schema.ColumnInfo), the primary key and the foreign keys to kept
    tables (`kept_lower`: their lower-case names); the stored values the question links to follow their column as a
    comment."""
    lower = table.name.lower()
    lines = [(column.line, links_by_column.get((lower, column.name.lower()), [])) for column in columns]
    if table.key_line:
        lines.append((table.key_line, []))
    shown = {c.name for c in columns}
    lines += [(fk.line, []) for fk in table.foreign_keys
              if fk.from_column in shown and fk.to_table.lower() in kept_lower]
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
