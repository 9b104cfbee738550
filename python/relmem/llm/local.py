"""The local LLM: a GGUF model run in this process by llama.cpp (through llama-cpp-python).

    model = LocalModel.open()                       # the installed default ($RELMEM_HOME/models/llm), or
    model = LocalModel.open("path/to/any.gguf")     # any GGUF with a chat template
    llm = model.as_llm()                            # a relmem LLM: pipeline, hybrid fills, eval, MCP sampling
    llm.chat("Say hi", grammar='root ::= "hi"')    # decoding constrained by a GBNF grammar (or json_schema=...)

Prompts are formatted by the chat template stored in the GGUF file. Consecutive requests that share a prefix (the
system prompt of a stage, the schemas of a question) reuse llama.cpp's KV cache for it; the states of long prompts
(the context switch's database overview) are also kept in $RELMEM_HOME/llm-prompt-cache for the next process
(RELMEM_LLM_PROMPT_CACHE=0 turns that off); `stats` counts the prompt tokens evaluated and reused.
"""
import functools
import json
import os
import threading
import time
import weakref

import numpy as np
from dataclasses import dataclass, field

from .._relmem import Error
from .._relmem import llm as _core
from ..gbnf import Grammar
from .greedy import GreedyDecoder
from .prompt_cache import PromptCache, shared_prefix

ENV_GGUF = "RELMEM_LLM_GGUF"
ENV_THREADS = "RELMEM_LLM_THREADS"
ENV_CONTEXT = "RELMEM_LLM_CONTEXT"
ENV_PROMPT_CACHE = "RELMEM_LLM_PROMPT_CACHE"
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_CONTEXT = 32768
DEFAULT_MAX_TOKENS = 512
# GGUF general.file_type values (llama.cpp's llama_ftype) of the quantizations relmem names.
FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
              12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
              32: "BF16"}


def models_dir():
    from ..encoders import relmem_home
    return os.path.join(relmem_home(), "models", "llm")


def installed_models():
    """Names of the GGUF models `make setup` (scripts/install_llm.sh) installed, the default first."""
    folder = models_dir()
    try:
        names = sorted(f[:-len(".gguf")] for f in os.listdir(folder)
                       if f.endswith(".gguf") and os.path.isfile(os.path.join(folder, f + ".installed")))
    except OSError:
        return []
    return sorted(names, key=lambda name: name != DEFAULT_MODEL)


def runtime_available():
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return False
    return True


def default_gguf():
    """The GGUF the local LLM uses: $RELMEM_LLM_GGUF, else the installed default model; None when there is none."""
    path = os.environ.get(ENV_GGUF)
    if path:
        return path
    installed = installed_models()
    return os.path.join(models_dir(), installed[0] + ".gguf") if installed else None


@dataclass
class LocalStats:
    """What the model did since it was opened: calls, prompt tokens (evaluated and reused from the KV cache),
    completion tokens and seconds."""
    calls: int = 0
    prompt_tokens: int = 0
    reused_prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    loops_broken: int = 0  # greedy tokens set aside because they repeated a loop (relmem.llm.greedy)
    by_stage: dict = field(default_factory=dict)

    def add(self, stage, prompt, reused, completion, seconds, loops_broken=0):
        self.calls += 1
        self.loops_broken += loops_broken
        self.prompt_tokens += prompt
        self.reused_prompt_tokens += reused
        self.completion_tokens += completion
        self.seconds += seconds
        entry = self.by_stage.setdefault(stage or "unspecified", {"calls": 0, "prompt_tokens": 0,
                                                                  "reused_prompt_tokens": 0,
                                                                  "completion_tokens": 0, "seconds": 0.0})
        entry["calls"] += 1
        entry["prompt_tokens"] += prompt
        entry["reused_prompt_tokens"] += reused
        entry["completion_tokens"] += completion
        entry["seconds"] += seconds

    def to_dict(self):
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "reused_prompt_tokens": self.reused_prompt_tokens, "completion_tokens": self.completion_tokens,
                "seconds": round(self.seconds, 3), "loops_broken": self.loops_broken,
                "by_stage": {k: dict(v, seconds=round(v["seconds"], 3)) for k, v in self.by_stage.items()}}


class LocalModel:
    """A GGUF chat model in process. Calls are serialised (llama.cpp's context is not shared between threads)."""

    def __init__(self, path, context=None, threads=None, seed=0, max_tokens=DEFAULT_MAX_TOKENS, prompt_cache=None):
        """`prompt_cache`: a folder for the KV-cache states of long prompts; default $RELMEM_HOME/llm-prompt-cache;
        False (or $RELMEM_LLM_PROMPT_CACHE=0) for none."""
        if not runtime_available():
            raise Error("the local LLM needs llama-cpp-python: run `make setup` (or scripts/install_llm.sh "
                        ".venv/bin/python), or configure an OpenAI-compatible endpoint instead")
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise Error(f"no GGUF model at {path}")
        with open(path, "rb") as f:
            if f.read(4) != b"GGUF":
                raise Error(f"{path} is not a GGUF file")
        from llama_cpp import Llama
        threads = threads or int(os.environ.get(ENV_THREADS, 0)) or os.cpu_count() or 1
        context = context or int(os.environ.get(ENV_CONTEXT, 0)) or None
        self.path = path
        self.max_tokens = max_tokens
        self.seed = seed
        try:
            probe_context = context or DEFAULT_CONTEXT
            self._model = Llama(model_path=path, n_ctx=probe_context, n_threads=threads, n_threads_batch=threads,
                                n_batch=512, seed=seed, verbose=False)
        except (ValueError, RuntimeError) as error:
            raise Error(f"llama.cpp could not load {path}: {error}") from None
        metadata = self._model.metadata or {}
        if "tokenizer.chat_template" not in metadata:
            raise Error(f"{path} has no chat template (tokenizer.chat_template): relmem needs a chat model")
        trained = int(metadata.get(f"{metadata.get('general.architecture', '')}.context_length", 0) or 0)
        if context is None and trained and trained < probe_context:
            self._model = Llama(model_path=path, n_ctx=trained, n_threads=threads, n_threads_batch=threads,
                                n_batch=512, seed=seed, verbose=False)
        self.context = self._model.n_ctx()
        self.threads = threads
        self.name = metadata.get("general.name") or os.path.basename(path)
        self.quantization = FILE_TYPES.get(int(metadata.get("general.file_type", -1)), "unknown")
        self.size_bytes = os.path.getsize(path)
        self.stats = LocalStats()
        self._lock = threading.Lock()
        self._decoder = GreedyDecoder(self._model, self._prompt_cache(prompt_cache))
        self._template = self._chat_template(metadata["tokenizer.chat_template"])
        _OPENED.add(self)

    def _prompt_cache(self, folder):
        if folder is False:
            return None
        if folder is None:
            if os.environ.get(ENV_PROMPT_CACHE, "1") == "0":
                return None
            from ..encoders import relmem_home
            folder = os.path.join(relmem_home(), "llm-prompt-cache")
        import llama_cpp
        return PromptCache.for_model(folder, os.path.realpath(self.path), self.size_bytes,
                                     os.path.getmtime(self.path), self.context, llama_cpp.__version__)

    @classmethod
    def open(cls, path=None, **options):
        """The model at `path`, else $RELMEM_LLM_GGUF, else the installed default. Raises relmem.Error when none."""
        path = path or default_gguf()
        if path is None:
            raise Error("no local LLM is installed: run `make setup` (or scripts/install_llm.sh .venv/bin/python), "
                        f"set {ENV_GGUF} to a GGUF file, or configure an OpenAI-compatible endpoint")
        return _open_cached(os.path.abspath(os.fspath(path)), tuple(sorted(options.items())))

    @staticmethod
    def opened():
        """The local models open in this process."""
        return list(_OPENED)

    @property
    def description(self):
        """The model's name and quantization, e.g. "Qwen2.5 Coder 1.5B Instruct GGUF (Q4_K_M, llama.cpp)"."""
        return f"{self.name} ({self.quantization}, llama.cpp)"

    @property
    def identity(self):
        return f"llama.cpp:{self.name}:{self.quantization}:{self.size_bytes}:seed={self.seed}"

    def as_llm(self):
        """This model as a relmem LLM (a CallableLLM whose identity names the model), for every relmem caller."""
        return _core.CallableLLM(self, name=self.identity)

    def _chat_template(self, template):
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        model = self._model

        def token_text(token):
            return model._model.token_get_text(token) if token != -1 else ""
        return Jinja2ChatFormatter(template=template, eos_token=token_text(model.token_eos()),
                                   bos_token=token_text(model.token_bos()), add_generation_prompt=True)

    def prompt_tokens(self, messages):
        """The tokens of `messages` formatted by the model's chat template, ready for the reply."""
        try:
            prompt = self._template(messages=list(messages)).prompt
        except Exception as error:  # noqa: BLE001 - the template is the model's Jinja code
            raise Error(f"{self.description}: its chat template failed: {error}") from None
        return self._model.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)

    def __call__(self, messages, stage="", temperature=None, max_tokens=None, stop=None, grammar=None,
                 json_schema=None):
        """One chat completion; the signature CallableLLM calls. Returns a relmem.llm.Response. Greedy at
        temperature 0 (the default), sampled with the model's seed otherwise."""
        if json_schema and not grammar:
            grammar = _json_schema_text(json_schema)
        if grammar:
            _check_grammar(grammar)
        max_tokens = max_tokens or self.max_tokens
        with self._lock:
            started = time.perf_counter()
            loops_before = self._decoder.loops_broken
            tokens = self.prompt_tokens(messages)
            if not temperature:
                text, completion, finish, reused = self._decoder.complete(tokens, max_tokens, stop or (), grammar)
            else:
                text, completion, finish, reused = self._sampled(messages, tokens, temperature, max_tokens, stop,
                                                                 grammar)
            seconds = time.perf_counter() - started
        self.stats.add(stage, len(tokens), reused, completion, seconds, self._decoder.loops_broken - loops_before)
        return _core.Response(text, _core.Usage(len(tokens), completion), finish)

    def _sampled(self, messages, tokens, temperature, max_tokens, stop, grammar):
        from llama_cpp import LlamaGrammar
        previous = np.array(self._model._input_ids)
        options = {"temperature": temperature, "max_tokens": max_tokens, "seed": self.seed, "stop": list(stop or [])}
        if grammar:
            options["grammar"] = LlamaGrammar.from_string(grammar, verbose=False)
        try:
            result = self._model.create_chat_completion(messages=list(messages), **options)
        except ValueError as error:  # e.g. a prompt longer than the context
            raise Error(f"{self.description}: {error}") from None
        choice = result["choices"][0]
        reused = min(shared_prefix(previous, np.asarray(tokens)), len(tokens) - 1)  # the last token is evaluated again
        return (choice["message"]["content"] or "", int(result["usage"]["completion_tokens"]),
                choice.get("finish_reason") or "stop", reused)

    def __repr__(self):
        return f"LocalModel({self.description}, context {self.context}, {self.threads} threads)"


_OPENED = weakref.WeakSet()


@functools.lru_cache(maxsize=2)
def _open_cached(path, options):
    return LocalModel(path, **dict(options))


@functools.lru_cache(maxsize=64)
def _check_grammar(text):
    """Reads the grammar with relmem's own reader first: llama.cpp reports a bad grammar only on its log."""
    Grammar(text)


@functools.lru_cache(maxsize=64)
def _json_schema_text(schema):
    from llama_cpp.llama_grammar import json_schema_to_gbnf
    try:
        return json_schema_to_gbnf(schema if isinstance(schema, str) else json.dumps(schema))
    except (ValueError, KeyError, TypeError, RecursionError) as error:
        raise Error(f"the JSON schema cannot be turned into a grammar: {error}") from None

