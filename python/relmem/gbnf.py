"""A recognizer for GBNF grammars (llama.cpp's notation): does a whole text match a grammar?

    Grammar(text).matches("Begin SQL\\nSELECT 1\\nEnd SQL")    # True or False

relmem writes grammars for constrained decoding (relmem.contracts, relmem.sql_grammar); this checks them without a
model: that every reply a stage should accept is one the grammar lets the model write, and how many free replies
would have been allowed. Supported: rules `name ::= ...` (continued on indented lines), "literals" with \\n \\t \\r
\\" \\\\ \\xHH escapes, [character classes] with ranges and ^, `.`, groups, `|`, and the repetitions ? * + {m}
{m,} {m,n}. Left-recursive rules match nothing (llama.cpp refuses them too).
"""
import re

from ._relmem import Error

_RULE = re.compile(r"^([A-Za-z0-9-]+)\s*::=", re.M)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "]": "]", "[": "[", "-": "-", "^": "^"}


class Grammar:
    def __init__(self, text, root="root"):
        self.rules = {}
        heads = list(_RULE.finditer(_strip_comments(text)))
        body_text = _strip_comments(text)
        for i, head in enumerate(heads):
            end = heads[i + 1].start() if i + 1 < len(heads) else len(body_text)
            name = head.group(1)
            if name in self.rules:
                raise Error(f"GBNF rule '{name}' is defined twice")
            parser = _Parser(body_text[head.end():end], name)
            self.rules[name] = parser.parse()
        if root not in self.rules:
            raise Error(f"GBNF grammar has no rule '{root}'")
        missing = sorted({ref for node in self.rules.values() for ref in _refs(node)} - set(self.rules))
        if missing:
            raise Error(f"GBNF grammar uses undefined rule(s): {', '.join(missing)}")
        self.root = root

    def matches(self, text):
        """Whether the whole of `text` is a sentence of the grammar."""
        return len(text) in _Match(self.rules, text).ends(("ref", self.root), 0)


def _strip_comments(text):
    return re.sub(r'#[^\n"]*$', "", text, flags=re.M)


def _refs(node):
    kind = node[0]
    if kind == "ref":
        yield node[1]
    elif kind in ("seq", "alt"):
        for child in node[1]:
            yield from _refs(child)
    elif kind == "rep":
        yield from _refs(node[1])


class _Parser:
    def __init__(self, text, rule):
        self.text = text
        self.rule = rule
        self.i = 0

    def fail(self, message):
        raise Error(f"GBNF rule '{self.rule}': {message} at {self.text[self.i:self.i + 20]!r}")

    def skip(self):
        while self.i < len(self.text) and self.text[self.i] in " \t\n\r":
            self.i += 1

    def parse(self):
        node = self.alternatives()
        self.skip()
        if self.i != len(self.text):
            self.fail("unexpected text")
        return node

    def alternatives(self):
        options = [self.sequence()]
        self.skip()
        while self.i < len(self.text) and self.text[self.i] == "|":
            self.i += 1
            options.append(self.sequence())
            self.skip()
        return options[0] if len(options) == 1 else ("alt", options)

    def sequence(self):
        items = []
        while True:
            self.skip()
            if self.i >= len(self.text) or self.text[self.i] in "|)":
                break
            items.append(self.postfix(self.atom()))
        return items[0] if len(items) == 1 else ("seq", items)

    def atom(self):
        c = self.text[self.i]
        if c == '"':
            return ("lit", self.literal())
        if c == "[":
            return self.char_class()
        if c == ".":
            self.i += 1
            return ("cls", True, ())
        if c == "(":
            self.i += 1
            node = self.alternatives()
            self.skip()
            if self.i >= len(self.text) or self.text[self.i] != ")":
                self.fail("unclosed (")
            self.i += 1
            return node
        name = re.match(r"[A-Za-z0-9-]+", self.text[self.i:])
        if not name:
            self.fail("unexpected character")
        self.i += len(name.group())
        return ("ref", name.group())

    def char(self):
        c = self.text[self.i]
        if c != "\\":
            self.i += 1
            return c
        code = self.text[self.i + 1]
        if code == "x":
            self.i += 4
            return chr(int(self.text[self.i - 2:self.i], 16))
        if code == "u":
            self.i += 6
            return chr(int(self.text[self.i - 4:self.i], 16))
        if code not in _ESCAPES:
            self.fail(f"unknown escape \\{code}")
        self.i += 2
        return _ESCAPES[code]

    def literal(self):
        self.i += 1
        out = []
        while self.i < len(self.text) and self.text[self.i] != '"':
            out.append(self.char())
        if self.i >= len(self.text):
            self.fail("unclosed literal")
        self.i += 1
        return "".join(out)

    def char_class(self):
        self.i += 1
        negated = self.text[self.i] == "^"
        if negated:
            self.i += 1
        ranges = []
        while self.i < len(self.text) and self.text[self.i] != "]":
            low = self.char()
            high = low
            if self.text[self.i] == "-" and self.text[self.i + 1] != "]":
                self.i += 1
                high = self.char()
            ranges.append((low, high))
        if self.i >= len(self.text):
            self.fail("unclosed [")
        self.i += 1
        return ("cls", negated, tuple(ranges))

    def postfix(self, node):
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in "?*+":
                self.i += 1
                node = ("rep", node, 0 if c != "+" else 1, 1 if c == "?" else None)
            elif c == "{":
                found = re.match(r"\{\s*(\d+)\s*(,\s*(\d*)\s*)?\}", self.text[self.i:])
                if not found:
                    self.fail("malformed {m,n}")
                self.i += len(found.group())
                low = int(found.group(1))
                high = low if found.group(2) is None else (int(found.group(3)) if found.group(3) else None)
                node = ("rep", node, low, high)
            else:
                break
        return node


class _Match:
    def __init__(self, rules, text):
        self.rules = rules
        self.text = text
        self.memo = {}

    def ends(self, node, pos):
        kind = node[0]
        if kind == "lit":
            return {pos + len(node[1])} if self.text.startswith(node[1], pos) else set()
        if kind == "cls":
            if pos >= len(self.text):
                return set()
            c = self.text[pos]
            inside = any(low <= c <= high for low, high in node[2])
            return {pos + 1} if inside != node[1] else set()
        if kind == "ref":
            key = (node[1], pos)
            if key not in self.memo:
                self.memo[key] = set()  # a rule reached again at the same place (left recursion) matches nothing
                self.memo[key] = self.ends(self.rules[node[1]], pos)
            return self.memo[key]
        if kind == "alt":
            out = set()
            for option in node[1]:
                out |= self.ends(option, pos)
            return out
        if kind == "seq":
            current = {pos}
            for item in node[1]:
                current = set().union(*(self.ends(item, p) for p in current)) if current else set()
            return current
        return self.repeat(node, pos)

    def repeat(self, node, pos):
        _, item, low, high = node
        out = {pos} if low == 0 else set()
        frontier, count = {pos}, 0
        while frontier and (high is None or count < high):
            following = set().union(*(self.ends(item, p) for p in frontier))
            count += 1
            if count >= low:
                if high is None:  # unbounded: only new places go on, so the loop ends
                    following -= out
                out |= following
            frontier = following
        return out
