"""Greedy decoding with llama.cpp, grammar checked lazily.

llama.cpp's grammar sampler, put in a sampler chain, checks every token of the vocabulary at every step (151,936
for Qwen2.5): most of a step's time. Greedy decoding needs only the best token the grammar allows, so this loop
checks the TOP most likely tokens first and the whole vocabulary only when none of them is allowed. The result is
the same token the full check would pick: every token outside the top ones is less likely than any inside.

A greedy small model can fall into a loop that the grammar allows (`CAST(CAST(CAST(...`) and decode until max_tokens.
A token that would make the reply end in LOOP_COPIES copies of one span, LOOP_TOKENS tokens or more in all, is set
aside for the next best one the grammar allows.

The KV cache keeps the previous prompt, and snapshots of the KV cache keep the last prompts of each kind (one per
family of prompts that share a prefix: a stage's system prompt, a question's schemas). A new prompt starts from
whichever shares the longest prefix with it and evaluates only the rest. With a PromptCache, the states of long
prompts are also kept on disk, and a new process starts from them.
"""
import ctypes
from dataclasses import dataclass

import numpy as np

from .._relmem import Error
from .prompt_cache import shared_prefix

TOP = 64  # tokens checked before the whole vocabulary; chosen so a step rarely needs the full check
SNAPSHOTS = 8  # KV-cache snapshots kept: about the LLM stages of one question
MIN_GAIN = 32  # tokens a snapshot must save over the live cache to be restored
LOOP_COPIES = 3  # copies of a span that make a loop
LOOP_TOKENS = 12  # ... when they hold this many tokens in all: "(((" and "1, 1, 1" stay allowed
LOOP_PERIOD = 64  # longest span checked: a repeated clause such as " AND x NOT IN (SELECT ...)" is about 40 tokens


def repeats_loop(tokens, token):
    """Whether `tokens` followed by `token` end in LOOP_COPIES or more copies of one span, LOOP_TOKENS tokens or more
    in all."""
    tail = list(tokens[-(LOOP_COPIES * LOOP_PERIOD - 1):]) + [token]
    for period in range(1, LOOP_PERIOD + 1):
        span = period * max(LOOP_COPIES, -(-LOOP_TOKENS // period))
        if span > len(tail):
            continue
        if tail[-1 - period] != token:
            continue
        end = tail[-span:]
        if all(end[i] == end[i % period] for i in range(period, span)):
            return True
    return False


@dataclass(eq=False)  # one snapshot is one object: list.remove() must not compare token arrays
class _Snapshot:
    tokens: np.ndarray
    data: object  # ctypes bytes of llama.cpp's sequence state


class GreedyDecoder:
    def __init__(self, llama, disk=None):
        """`disk`: a relmem.llm.prompt_cache.PromptCache whose states of long prompts outlive the process."""
        import llama_cpp
        self.lib = llama_cpp
        self.llama = llama
        self.vocab = llama._model.vocab
        self.n_vocab = llama.n_vocab()
        self._all = (llama_cpp.llama_token_data * self.n_vocab)()
        self._top = (llama_cpp.llama_token_data * TOP)()
        self.constrained_steps = 0  # steps decoded under a grammar
        self.full_checks = 0        # of which checked the whole vocabulary
        self.snapshots = []         # _Snapshot, least recently used first
        self.restored = 0           # prompts started from a snapshot
        self.loops_broken = 0       # tokens set aside because they repeated a loop
        self.disk = disk

    def complete(self, tokens, max_tokens, stop=(), grammar=None):
        """Decodes after the prompt `tokens`. Returns (text, completion tokens, finish reason, reused prompt
        tokens): finish reason "stop" (end of generation, a stop string or the grammar's end) or "length"."""
        if len(tokens) >= self.llama.n_ctx():
            raise Error(f"the prompt has {len(tokens)} tokens; the model's context holds {self.llama.n_ctx()}")
        max_tokens = min(max_tokens, self.llama.n_ctx() - len(tokens))
        tokens = np.asarray(tokens, dtype=np.intc)
        reused = self._start(tokens)
        self.llama.n_tokens = reused
        self.llama.eval(tokens[reused:].tolist())
        self._save(tokens)
        sampler = self._grammar_sampler(grammar) if grammar else None
        try:
            return (*self._decode(max_tokens, stop, sampler), reused)
        finally:
            if sampler is not None:
                self.lib.llama_sampler_free(sampler)

    def _start(self, tokens):
        """Tokens of the prompt already in the KV cache: the live cache's, or a snapshot's when it shares more."""
        live = shared_prefix(self.llama.input_ids[:self.llama.n_tokens], tokens)
        best = max(self.snapshots, key=lambda s: shared_prefix(s.tokens, tokens), default=None)
        if best is not None and shared_prefix(best.tokens, tokens) >= live + MIN_GAIN:
            ctx = self.llama._ctx.ctx
            if self.lib.llama_state_seq_set_data(ctx, best.data, len(best.data), 0):
                self.llama.input_ids[:len(best.tokens)] = best.tokens
                self.llama.n_tokens = len(best.tokens)
                self.snapshots.remove(best)
                self.snapshots.append(best)
                self.restored += 1
                live = shared_prefix(best.tokens, tokens)
        if self.disk is not None:
            live = max(live, self._start_from_disk(tokens, live))
        return min(live, len(tokens) - 1)  # the last prompt token is evaluated again for its logits

    def _start_from_disk(self, tokens, live):
        """Loads the disk entry sharing the longest prefix with `tokens` when it saves MIN_GAIN tokens over `live`;
        returns the tokens it shares (0 when none was loaded)."""
        found = self.disk.best(tokens)
        if found is None or found[1] < live + MIN_GAIN:
            return 0
        name, shared, kept = found
        data = self.disk.load(name)
        if data is None:
            return 0
        state = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if not self.lib.llama_state_seq_set_data(self.llama._ctx.ctx, state, len(data), 0):
            return 0
        self.llama.input_ids[:len(kept)] = kept
        self.llama.n_tokens = len(kept)
        self.snapshots.append(_Snapshot(np.asarray(kept, dtype=np.intc), state))
        if len(self.snapshots) > SNAPSHOTS:
            self.snapshots.pop(0)
        self.restored += 1
        return shared

    def _save(self, tokens):
        """Keeps the KV cache of this prompt, in place of the snapshot of the same family (sharing at least half of
        the shorter prompt), else of the least recently used one."""
        ctx = self.llama._ctx.ctx
        size = self.lib.llama_state_seq_get_size(ctx, 0)
        data = (ctypes.c_uint8 * size)()
        if self.lib.llama_state_seq_get_data(ctx, data, size, 0) != size:
            return
        shared = [shared_prefix(s.tokens, tokens) for s in self.snapshots]
        family = [s for s, n in zip(self.snapshots, shared) if n * 2 >= min(len(s.tokens), len(tokens))]
        for old in family:
            self.snapshots.remove(old)
        if len(self.snapshots) >= SNAPSHOTS:
            self.snapshots.pop(0)
        self.snapshots.append(_Snapshot(tokens.copy(), data))
        if self.disk is not None:
            self.disk.store(tokens, data, max(shared, default=0))

    def _grammar_sampler(self, grammar):
        sampler = self.lib.llama_sampler_init_grammar(self.vocab, grammar.encode("utf-8"), b"root")
        if not sampler:
            raise Error("llama.cpp refused the grammar")
        return sampler

    def _decode(self, max_tokens, stop, sampler):
        out = []
        text = b""
        for _ in range(max_tokens):
            logits = np.ctypeslib.as_array(self.llama._ctx.get_logits(), shape=(self.n_vocab,))
            token = self._best(logits, sampler)
            if token is not None and repeats_loop(out, token):
                logits = logits.copy()
                while token is not None and repeats_loop(out, token):
                    self.loops_broken += 1
                    logits[token] = -np.inf
                    token = self._best(logits, sampler)
            if token is None or self.lib.llama_vocab_is_eog(self.vocab, token):
                return self._text(text, stop), len(out), "stop"
            if sampler is not None:
                self.lib.llama_sampler_accept(sampler, token)
            out.append(token)
            text += self.llama.detokenize([token], prev_tokens=out[:-1])
            decoded = text.decode("utf-8", errors="ignore")
            if any(s and s in decoded for s in stop):
                return self._text(text, stop), len(out), "stop"
            self.llama.eval([token])
        return self._text(text, stop), len(out), "length"

    @staticmethod
    def _text(raw, stop):
        text = raw.decode("utf-8", errors="replace")
        cut = min((text.index(s) for s in stop if s and s in text), default=len(text))
        return text[:cut]

    def _best(self, logits, sampler):
        if sampler is None:
            return int(np.argmax(logits))
        self.constrained_steps += 1
        top = np.argpartition(logits, -TOP)[-TOP:]
        allowed = self._allowed(sampler, self._top, top, logits)
        if allowed is None:
            self.full_checks += 1
            allowed = self._allowed(sampler, self._all, np.arange(self.n_vocab), logits)
        return allowed

    def _allowed(self, sampler, buffer, ids, logits):
        """The most likely of `ids` the grammar allows (None when it allows none)."""
        size = len(ids)
        view = np.ctypeslib.as_array(ctypes.cast(buffer, ctypes.POINTER(ctypes.c_byte)),
                                     shape=(size * ctypes.sizeof(self.lib.llama_token_data),))
        records = view.view(np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)]))
        records["id"] = ids
        records["logit"] = logits[ids]
        records["p"] = 0.0
        array = self.lib.llama_token_data_array(data=buffer, size=size, selected=-1, sorted=False)
        self.lib.llama_sampler_apply(sampler, ctypes.byref(array))
        kept = records["logit"][:array.size]
        if not np.isfinite(kept).any():
            return None
        return int(records["id"][:array.size][int(np.argmax(kept))])
