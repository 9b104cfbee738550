"""`relmem values aliases ...`: list, add and remove what the value memory has learned.

    relmem values aliases list   --memory MEMDIR [--db DB] [--table T] [--column C] [--json]
    relmem values aliases add    --memory MEMDIR --db DB --table T --column C --written "Big Apple" --stored NYC
    relmem values aliases remove --memory MEMDIR --db DB --table T --column C --written "Big Apple"

MEMDIR is a value memory folder, or a folder saved by `relmem index` (its values/ subfolder is used).
"""
import json
import os
import sys

from . import Error
from ._relmem import values as _values


def _folder(memory):
    nested = os.path.join(memory, "values")
    if os.path.isfile(os.path.join(nested, "manifest.json")):
        return nested
    if os.path.isfile(os.path.join(memory, "manifest.json")):
        return memory
    raise Error(f"no value memory in {memory} (no manifest.json there or in its values/ folder)")


def _alias_dict(alias):
    return {name: getattr(alias, name) for name in (
        "db", "table", "column", "written", "stored", "source", "evidence", "created", "uses")}


def _list(args):
    aliases = [a for a in _values.aliases_in_folder(_folder(args.memory))
               if (not args.db or a.db == args.db) and (not args.table or a.table.lower() == args.table.lower())
               and (not args.column or a.column.lower() == args.column.lower())]
    if args.json:
        print(json.dumps([_alias_dict(a) for a in aliases], ensure_ascii=False))
        return 0
    for a in aliases:
        print(f"{a.db}.{a.table}.{a.column}: '{a.written}' -> '{a.stored}' ({a.source}, {a.uses} uses, {a.created})")
    if not aliases:
        print("no aliases", file=sys.stderr)
    return 0


def _add(args):
    from .values import ValueMemory
    folder = _folder(args.memory)
    memory = ValueMemory.load(folder)
    alias = memory.add_alias(args.db, args.table, args.column, args.written, args.stored, source=args.source,
                             evidence=args.evidence)
    memory.save_aliases(folder)
    print(f"{alias.db}.{alias.table}.{alias.column}: '{alias.written}' -> '{alias.stored}' ({alias.uses} uses)")
    return 0


def _remove(args):
    if not _values.remove_alias_in_folder(_folder(args.memory), args.db, args.table, args.column, args.written):
        print(f"no alias of '{args.written}' in {args.db}.{args.table}.{args.column}", file=sys.stderr)
        return 1
    print(f"removed '{args.written}' from {args.db}.{args.table}.{args.column}")
    return 0


def register(commands):
    p = commands.add_parser("values", help="the value memory's learned aliases")
    sub = p.add_subparsers(dest="values_command", required=True)
    aliases = sub.add_parser("aliases", help="list, add or remove learned aliases").add_subparsers(
        dest="aliases_command", required=True)
    for name, func, needs in (("list", _list, False), ("add", _add, True), ("remove", _remove, True)):
        a = aliases.add_parser(name)
        a.add_argument("--memory", required=True, help="value memory folder (or a `relmem index` folder)")
        for option in ("--db", "--table", "--column"):
            a.add_argument(option, required=needs)
        if name == "list":
            a.add_argument("--json", action="store_true")
        else:
            a.add_argument("--written", required=True, help="the value as written")
        if name == "add":
            a.add_argument("--stored", required=True, help="the stored value it means")
            a.add_argument("--source", default="user", help="provenance (default: user)")
            a.add_argument("--evidence", default="", help="what it was learned from")
        a.set_defaults(func=func)
