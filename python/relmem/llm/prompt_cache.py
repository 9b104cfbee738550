"""KV-cache states of long prompts kept on disk, so that a new process starts a prompt from a prefix an earlier one
evaluated: the context switch's system prompt and database overview (thousands of tokens, the same for every
question) is evaluated once per model, not once per `relmem ask`.

    cache = PromptCache.for_model(folder, identity)   # $RELMEM_HOME/llm/prompt-cache/<key>/
    name, shared, kept = cache.best(tokens)          # the entry sharing the longest prefix with `tokens` (or None)
    data = cache.load(name)                          # llama.cpp's sequence state, or None when unreadable
    cache.store(tokens, data, repeated)              # kept when `repeated` (the prefix an earlier prompt of this
                                                     # process shared) is long and its family is not kept yet

Each entry is two files of relmem's own: <name>.tokens (the prompt's token ids) and <name>.state (the state bytes),
written to temporary files and renamed into place. Entries beyond ENTRIES are removed, least recently used first;
an unreadable entry is skipped. The folder is keyed by the model file, the context length and
llama-cpp-python's version, whose states are not interchangeable.
"""
import hashlib
import os
import tempfile

import numpy as np

MIN_TOKENS = 1024  # prefixes kept: shorter ones take seconds to evaluate again
MIN_SHARED = 512   # tokens an entry must share with a prompt to be loaded
ENTRIES = 4        # per model: about the long prompt families of one collection
MAGIC = b"RMKV1\n"


def shared_prefix(a, b):
    """The length of the common prefix of two token arrays."""
    n = min(len(a), len(b))
    differ = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(differ[0]) if len(differ) else n


class PromptCache:
    def __init__(self, folder):
        self.folder = folder
        self.loaded = 0   # entries loaded into the model
        self.stored = 0   # entries written

    @classmethod
    def for_model(cls, root, *key_parts):
        key = hashlib.sha256("\n".join(str(part) for part in key_parts).encode()).hexdigest()[:24]
        return cls(os.path.join(root, key))

    def _names(self):
        try:
            return sorted(name[:-len(".tokens")] for name in os.listdir(self.folder) if name.endswith(".tokens"))
        except OSError:
            return []

    def _tokens(self, name):
        try:
            with open(os.path.join(self.folder, name + ".tokens"), "rb") as f:
                if f.read(len(MAGIC)) != MAGIC:
                    return None
                return np.frombuffer(f.read(), dtype=np.int32)
        except (OSError, ValueError):
            return None

    def best(self, tokens):
        """(name, shared tokens) of the entry sharing the longest prefix with `tokens` (at least MIN_SHARED), or
        None."""
        found = None
        for name in self._names():
            kept = self._tokens(name)
            if kept is None:
                continue
            shared = shared_prefix(kept, tokens)
            if shared >= MIN_SHARED and (found is None or shared > found[1]):
                found = (name, shared, kept)
        return found

    def load(self, name):
        """The state bytes of entry `name`, or None when they cannot be read."""
        path = os.path.join(self.folder, name + ".state")
        try:
            with open(path, "rb") as f:
                data = f.read()
            os.utime(path)
        except OSError:
            return None
        self.loaded += 1
        return data

    def store(self, tokens, data, repeated):
        """Keeps the state of prompt `tokens` when the prefix it shares with an earlier prompt (`repeated` tokens:
        a prefix that recurs, such as a stage's instructions and the database overview, not one question's schemas)
        is long, and no entry shares half of it already (that entry then counts as used now)."""
        tokens = np.asarray(tokens, dtype=np.int32)
        if repeated < MIN_TOKENS:
            return False
        for name in self._names():
            kept = self._tokens(name)
            if kept is not None and shared_prefix(kept, tokens) * 2 >= min(len(kept), len(tokens)):
                self._touch(name)  # its family is in use: the last to be dropped
                return False
        try:
            os.makedirs(self.folder, exist_ok=True)
            name = hashlib.sha256(tokens.tobytes()).hexdigest()[:24]
            self._write(name + ".state", bytes(data))
            self._write(name + ".tokens", MAGIC + tokens.tobytes())
        except OSError:
            return False
        self.stored += 1
        self._trim()
        return True

    def _write(self, filename, payload):
        handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".writing-")
        try:
            with os.fdopen(handle, "wb") as f:
                f.write(payload)
            os.replace(temporary, os.path.join(self.folder, filename))
        except OSError:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise

    def _trim(self):
        def used(name):
            try:
                return os.path.getmtime(os.path.join(self.folder, name + ".state"))
            except OSError:
                return 0.0
        names = sorted((name for name in self._names() if self._tokens(name) is not None), key=used)
        for name in names[:max(0, len(names) - ENTRIES)]:
            self._remove(name)

    def _touch(self, name):
        try:
            os.utime(os.path.join(self.folder, name + ".state"))
        except OSError:
            pass

    def _remove(self, name):
        for suffix in (".tokens", ".state"):
            try:
                os.unlink(os.path.join(self.folder, name + suffix))
            except OSError:
                pass
