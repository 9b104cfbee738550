"""Encoder loading: MiniLM is the default when installed, then USE-lite, then the lexical hashing encoder."""
import os
import warnings

from . import _relmem

DEFAULT_ENCODER = "minilm"  # ahead of USE-lite on every selection set and in the LLM pipeline (docs/encoders.md)
SECOND_ENCODER = "use-lite"
FALLBACK_ENCODER = "hashing"
DEFAULT_CHAIN = f"{DEFAULT_ENCODER} when installed, else {SECOND_ENCODER}, else {FALLBACK_ENCODER}"


def relmem_home():
    """$RELMEM_HOME, else ~/.cache/relmem (resolved by the C++ core, as the encoders resolve it)."""
    return _relmem.relmem_home() or os.path.join(os.path.expanduser("~"), ".cache", "relmem")


def use_lite_dir():
    """The folder the "use-lite" encoder loads its weights from, or None when they are not installed."""
    return _relmem.find_use_lite_dir() or None


def installed_model_dir(name):
    """$RELMEM_HOME/models/<name> when scripts/install_models.sh installed that model ("minilm"), else None."""
    return _relmem.find_installed_model_dir(name) or None


def use_lite_installed():
    return SECOND_ENCODER in _relmem.registered_encoders() and use_lite_dir() is not None


def minilm_installed():
    return installed_model_dir(DEFAULT_ENCODER) is not None


def default_encoder_name():
    if minilm_installed():
        return DEFAULT_ENCODER
    return SECOND_ENCODER if use_lite_installed() else FALLBACK_ENCODER


def load_encoder(name=None):
    """Loads an encoder by spec: "use-lite", "minilm", "hashing", "hashing:1024", "bert:/path/to/model".

    With no name, the default: MiniLM when installed, else USE-lite, else the hashing encoder (with a warning
    naming the encoder used instead).
    """
    if name is None:
        name = default_encoder_name()
        if name != DEFAULT_ENCODER:
            used = "USE-lite" if name == SECOND_ENCODER else "the lexical hashing encoder"
            warnings.warn(f"MiniLM is not installed (run `make setup`); using {used}", stacklevel=2)
    return _relmem.load_encoder_spec(name)


def as_encoder(encoder, default=None):
    """The encoder a caller means: an Encoder as it is, a spec string loaded (load_encoder), None the spec `default`,
    or the package default when that is None too. Anything else is a TypeError."""
    if encoder is None:
        return load_encoder(default)
    if isinstance(encoder, str):
        return load_encoder(encoder)
    if isinstance(encoder, _relmem.Encoder):
        return encoder
    raise TypeError(f"encoder must be a relmem.Encoder or an encoder spec, not {type(encoder).__name__}")
