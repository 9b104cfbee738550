"""Writing and reading the files of a saved memory: folders written as a whole, manifests checked field by field."""
import contextlib
import json

from . import Error, _relmem


@contextlib.contextmanager
def atomic_folder(folder):
    """Yields a temporary sibling folder to write into; when the block ends without an error, the files are flushed
    and the folder renamed onto `folder` (the old one removed). On an error the old folder stays as it was."""
    target = _relmem.AtomicFolder(folder)
    try:
        yield target.path
    except BaseException:
        target.discard()
        raise
    target.commit()


def read_manifest(path, kind, fields, format_name=None, version=None):
    """The JSON object in `path`, with each of `fields` ({name: type or tuple of types}) present and of its type,
    and, when `format_name` is given, its "format" and "version" those; relmem.Error naming the file and the field
    otherwise."""
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
    except OSError as error:
        raise Error(f"cannot read {kind} {path}: {error.strerror}") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise Error(f"{kind} {path} is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise Error(f"{kind} {path} is not a JSON object")
    for name, types in fields.items():
        if name not in data:
            raise Error(f"{kind} {path} lacks the field '{name}'")
        if not isinstance(data[name], types) or (isinstance(data[name], bool) and bool not in _tuple(types)):
            raise Error(f"{kind} {path}: field '{name}' has the wrong type ({type(data[name]).__name__})")
    if format_name is not None and (data.get("format") != format_name or data.get("version") != version):
        raise Error(f"{path} is not a relmem {kind} of version {version}")
    return data


def _tuple(types):
    return types if isinstance(types, tuple) else (types,)
