"""Database descriptions as the prompts show them."""


def schema_text(catalog, database, description=""):
    """One database for a SQL-writing prompt: its name, its description when known, and its DDL."""
    head = f"Database: {database}"
    if description:
        head += f"\n-- {description}"
    return f"{head}\n{catalog.ddl(database).strip()}"


def database_schema(state, catalog, database, descriptions=None):
    """One database for a correction prompt: its part of the question's built context (State.context) when there
    is one, else its full DDL."""
    built = state.context.database(database) if state.context is not None else None
    return built.text if built is not None else schema_text(catalog, database, (descriptions or {}).get(database, ""))


def overview_text(catalog, descriptions=None, max_databases=30, max_names_chars=2000, databases=None):
    """The subjects of the collection for the context switch: one line per database (its description, else its
    tables and columns), up to `max_databases`; the names of any others follow on one line, cut to a length.
    `databases`: those to show (default: every database of the catalog)."""
    databases = catalog.databases if databases is None else list(databases)
    lines = []
    for database in databases[:max_databases]:
        description = (descriptions or {}).get(database)
        if not description:
            tables = catalog.schema(database).tables
            description = "; ".join(f"{t.name} ({', '.join(c.name for c in t.columns)})" for t in tables)
        lines.append(f"- {database}: {description}")
    rest = databases[max_databases:]
    if rest:
        names = ", ".join(rest)
        if len(names) > max_names_chars:
            names = names[:max_names_chars].rsplit(",", 1)[0] + ", ..."
        lines.append(f"- and {len(rest)} more databases: {names}")
    return "\n".join(lines)


def shown_columns(state, catalog, database):
    """{table: [column, ...]} of `database` as the SQL prompts show it: the tables and columns its built context
    keeps (State.context), else all of them. What schema-constrained decoding lets a query name."""
    built = state.context.database(database) if state.context is not None else None
    if built is not None:
        return {table.name: list(table.columns) for table in built.tables}
    return {table.name: [column.name for column in table.columns] for table in catalog.schema(database).tables}
