"""The LLM layer: one interface for any LLM, with a response cache and token accounting.

Every LLM has ``chat(messages, stage="", *, temperature=None, max_tokens=None, stop=None) -> Response`` where
``messages`` is a list of ``{"role": ..., "content": ...}`` dicts (or ``(role, content)`` pairs, or one str) and
``Response`` has ``text``, ``usage`` (``prompt_tokens``, ``completion_tokens``, ``total_tokens``, ``estimated``),
``finish_reason`` and ``cached``. ``stage`` names the pipeline stage served, in the stage's own words (printable
ASCII, at most 64 characters; '' for none); it travels as the HTTP header ``X-Relmem-Stage`` and as the ``stage=``
keyword of Python callables.

    llm = OpenAIChat("http://localhost:11434/v1", "qwen2.5:7b", api_key_env="OPENAI_API_KEY")
    llm = LocalModel.open().as_llm()                           # the local llama.cpp model `make setup` installs
    llm = CallableLLM(lambda messages, **params: "(YES)")      # any fn(messages, **params) -> str
    llm = CachedLLM(llm, "out/llm_cache.sqlite")               # reruns are answered from disk
    llm = MeteredLLM(llm)                                      # llm.ledger counts tokens per stage
    llm = ScriptedLLM([ScriptRule(stage="plan", reply="...")]) # scripted replies: tests and notebooks, not a model
    reply = llm.chat([{"role": "user", "content": "..."}], stage="plan")

``chat`` also takes ``grammar=`` (GBNF) or ``json_schema=`` (JSON text): the local model enforces them while decoding,
OpenAI-compatible endpoints get JSON schemas as ``response_format``, other LLMs ignore both.

All classes but ScriptedLLM and LocalModel are implemented in C++ (``relmem._relmem.llm``), so the C++ pipeline and Python share
them; chat() releases the GIL while it waits. Failures raise ``relmem.Error``.
"""
import os

from .. import outputs
from .._relmem import Error
from .._relmem import llm as _core
from ..scripted_llm import ScriptedLLM, ScriptedRequest, ScriptRule
from .local import LocalModel

LLM = _core.LLM
OpenAIChat = _core.OpenAIChat
built_with_http = _core.built_with_http
CallableLLM = _core.CallableLLM
CachedLLM = _core.CachedLLM
MeteredLLM = _core.MeteredLLM
TokenLedger = _core.TokenLedger
StageTokens = _core.StageTokens
Response = _core.Response
Usage = _core.Usage
as_llm = _core.as_llm
estimate_tokens = _core.estimate_tokens

ENV_BASE_URL = "RELMEM_LLM_BASE_URL"
ENV_MODEL = "RELMEM_LLM_MODEL"
ENV_LOCAL = "RELMEM_LOCAL_LLM"  # "0": never fall back to the local model
DEFAULT_API_KEY_ENV = "RELMEM_LLM_API_KEY"


def local_default_enabled():
    return os.environ.get(ENV_LOCAL, "1") != "0"


def from_config(base_url=None, model=None, api_key_env=None, cache=None, gguf=None, local=True, **options):
    """The configured LLM, or None when none is configured.

    An OpenAI-compatible endpoint when ``base_url`` and ``model`` are given (or the environment variables
    RELMEM_LLM_BASE_URL and RELMEM_LLM_MODEL); the API key is read from the variable named ``api_key_env`` (default
    RELMEM_LLM_API_KEY); raises relmem.Error when only one of the two is given. Otherwise the local llama.cpp model:
    ``gguf`` (or $RELMEM_LLM_GGUF), else the default `make setup` installed, unless ``local`` is False or
    RELMEM_LOCAL_LLM=0. None when there is neither. ``cache``: path of a response cache (SQLite) to wrap the LLM
    in. ``options`` go to OpenAIChat (timeout, max_retries, backoff, max_backoff, temperature, max_tokens).
    """
    from . import local as local_llm
    base_url = base_url or os.environ.get(ENV_BASE_URL) or None
    model = model or os.environ.get(ENV_MODEL) or None
    if base_url is None and model is None:
        gguf = gguf or os.environ.get(local_llm.ENV_GGUF) or None
        if gguf is None and not (local and local_default_enabled() and local_llm.runtime_available()):
            return None
        if gguf is None and local_llm.default_gguf() is None:
            return None
        llm = local_llm.LocalModel.open(gguf).as_llm()
    elif base_url is None:
        raise Error(f"an LLM model is set but no base URL: pass --llm-base-url or set {ENV_BASE_URL}")
    elif model is None:
        raise Error(f"an LLM base URL is set but no model: pass --llm-model or set {ENV_MODEL}")
    else:
        llm = OpenAIChat(base_url, model, api_key_env=api_key_env or DEFAULT_API_KEY_ENV, **options)
    return CachedLLM(llm, os.fspath(cache)) if cache else llm


def _innermost(llm):
    while isinstance(llm, (CachedLLM, MeteredLLM)):
        llm = llm.inner
    return llm


def local_model_of(llm):
    """The LocalModel behind `llm` (through caches and meters), or None for endpoints and other LLMs."""
    inner = _innermost(llm)
    if isinstance(inner, OpenAIChat):
        return None
    from .local import LocalModel
    return next((model for model in LocalModel.opened() if model.identity == inner.identity), None)


def describe(llm):
    """A line naming the LLM: the local model's name and quantization, or the endpoint's model and URL."""
    inner = _innermost(llm)
    if isinstance(inner, OpenAIChat):
        return f"{inner.model} at {inner.url}"
    local = local_model_of(inner)
    return local.description if local else inner.identity


def add_llm_arguments(parser):
    """Adds --llm-base-url, --llm-model, --llm-api-key-env, --llm-gguf, --no-llm, --llm-cache, --llm-timeout and
    --llm-max-retries."""
    group = parser.add_argument_group("LLM (default: the local llama.cpp model `make setup` installs; or an "
                                      "OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, llama.cpp server)")
    group.add_argument("--llm-base-url", default=None,
                       help=f"chat completions base URL including /v1 (default: ${ENV_BASE_URL})")
    group.add_argument("--llm-model", default=None, help=f"model name (default: ${ENV_MODEL})")
    group.add_argument("--llm-api-key-env", default=None, metavar="VAR",
                       help=f"environment variable holding the API key (default: {DEFAULT_API_KEY_ENV})")
    group.add_argument("--llm-gguf", default=None, metavar="PATH",
                       help="a GGUF chat model run locally by llama.cpp (default: $RELMEM_LLM_GGUF, else the "
                            "installed default)")
    group.add_argument("--no-llm", action="store_true",
                       help="no LLM at all, not even the local one: only the LLM-free stages run")
    group.add_argument("--llm-cache", default=None, metavar="PATH",
                       help="SQLite response cache: reruns are answered from disk")
    group.add_argument("--llm-timeout", type=float, default=120.0, help="seconds per attempt (default: 120)")
    group.add_argument("--llm-max-retries", type=int, default=3,
                       help="retries on timeouts, 429 and 5xx, with exponential backoff (default: 3)")
    return group


# The flags of relmem's commands that name what they read: a response cache may not be written there.
READ_FLAGS = {"dbs": "--dbs", "memory": "--memory", "set_path": "--set", "dir": "--dir", "swan": "--swan",
              "spider": "--spider"}


def from_args(args):
    """from_config() with the values of the arguments add_llm_arguments() added; None when no LLM is configured.
    A --llm-cache that is, holds or lies inside a folder or file the command reads is refused."""
    if args.no_llm:
        return None
    if args.llm_cache:
        outputs.refuse_overlap(args.llm_cache, {flag: getattr(args, name, None) for name, flag in READ_FLAGS.items()},
                               "--llm-cache")
    return from_config(base_url=args.llm_base_url, model=args.llm_model, api_key_env=args.llm_api_key_env,
                       cache=args.llm_cache, gguf=args.llm_gguf, timeout=args.llm_timeout,
                       max_retries=args.llm_max_retries)
