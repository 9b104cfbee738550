"""Encoder loading: USE-lite is the default when its weights are installed, hashing the fallback."""
import os
import warnings

from . import _relmem

DEFAULT_ENCODER = "use-lite"
FALLBACK_ENCODER = "hashing"


def relmem_home():
    return os.environ.get("RELMEM_HOME", os.path.join(os.path.expanduser("~"), ".cache", "relmem"))


def use_lite_installed():
    if DEFAULT_ENCODER not in _relmem.registered_encoders():
        return False
    candidates = [os.environ.get("RELMEM_USE_LITE_DIR"), os.path.join(relmem_home(), "models", "use-lite")]
    return any(d and os.path.isfile(os.path.join(d, "model.json")) for d in candidates)


def default_encoder_name():
    return DEFAULT_ENCODER if use_lite_installed() else FALLBACK_ENCODER


def load_encoder(name=None):
    """Loads an encoder by spec: "use-lite", "hashing", "hashing:1024", "bert:/path/to/model".

    With no name, the default: USE-lite when installed, else the hashing encoder (with a warning).
    """
    if name is None:
        name = default_encoder_name()
        if name == FALLBACK_ENCODER:
            warnings.warn("USE-lite weights are not installed (run `make setup`); using the lexical hashing encoder",
                          stacklevel=2)
    return _relmem.load_encoder_spec(name)
