"""Where relmem writes. Every command and API that writes a file goes through here (memory folders through
memory_files.atomic_folder, which keeps the same rules):

- an output is refused, with a message naming both paths, when it is, holds or lies inside something the same
  command reads databases or memories from (refuse_overlap);
- a file is written into a temporary sibling and renamed onto its path once complete (write_file, new_file), so
  a failed write leaves nothing half-written;
- a file that exists and was not created by this process is never overwritten or deleted, and a folder is only
  ever created, never emptied.
"""
import contextlib
import os
import tempfile

from . import Error

_created = set()  # real paths of the files and folders this process created


def _real(path):
    return os.path.realpath(os.path.abspath(os.fspath(path)))


def _within(inner, outer):
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def refuse_overlap(output, reads, output_name="--out"):
    """Raises relmem.Error when `output` is, holds or lies inside one of `reads` ({name: path or None}, the
    command's inputs, e.g. {"--dbs": "spider/database"}), so that no write can land on what the command reads."""
    out = _real(output)
    for name, path in reads.items():
        if path is None:
            continue
        for one in ([path] if isinstance(path, (str, os.PathLike)) else path):
            read = _real(one)
            if _within(out, read) or _within(read, out):
                relation = "is" if out == read else "lies inside" if _within(out, read) else "holds"
                raise Error(f"{output_name} {output} {relation} {name} {one}, which relmem reads; "
                            f"choose an output apart from every input")


def created_by_this_run(path):
    return _real(path) in _created


def refuse_existing(path, output_name="--out"):
    """Raises relmem.Error when `path` exists and this process did not create it."""
    if os.path.lexists(path) and not created_by_this_run(path):
        raise Error(f"{output_name} {path} exists and relmem did not write it in this run; it is left as it is: "
                    f"choose a new path or move it away")


def make_folder(folder, output_name="--out"):
    """Creates `folder` and its missing parents (each recorded as created by this run); an existing folder is
    used as it is. Raises relmem.Error when the path exists and is not a folder."""
    folder = os.fspath(folder)
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise Error(f"{output_name} {folder} exists and is not a folder")
    missing = []
    probe = os.path.abspath(folder)
    while not os.path.lexists(probe):
        missing.append(probe)
        probe = os.path.dirname(probe)
    try:
        for path in reversed(missing):
            os.mkdir(path)
            _created.add(_real(path))
    except OSError as error:
        raise Error(f"cannot create the folder {folder}: {error.strerror}") from None
    return folder


@contextlib.contextmanager
def new_file(path, output_name="--out"):
    """Yields a temporary sibling of `path` to write; when the block ends without an error it is flushed and
    renamed onto `path`, else removed. Refuses a `path` that exists and was not created by this run."""
    path = os.fspath(path)
    refuse_existing(path, output_name)
    make_folder(os.path.dirname(os.path.abspath(path)), output_name)
    handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                         dir=os.path.dirname(os.path.abspath(path)))
    os.close(handle)
    try:
        yield temporary
        with open(temporary, "rb+") as f:
            os.fsync(f.fileno())
        _move_into_place(temporary, path, output_name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _created.add(_real(path))


def _move_into_place(temporary, path, output_name):
    """Renames `temporary` onto `path`: a hard link where the path is new, so that a file another process put
    there meanwhile is kept (and reported), a rename where this run created the path."""
    if created_by_this_run(path):
        os.replace(temporary, path)
        return
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise Error(f"{output_name} {path} appeared while relmem wrote it; it is left as it is") from None
    except OSError:  # a file system without hard links
        refuse_existing(path, output_name)
        os.replace(temporary, path)
        return
    os.unlink(temporary)


def record_created(path):
    """Records a file another writer (a relmem store opened by path) has just created, as created by this run."""
    _created.add(_real(path))


def write_file(path, data, output_name="--out"):
    """Writes `data` (str as UTF-8, or bytes) to `path` through new_file."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with new_file(path, output_name) as temporary:
            with open(temporary, "wb") as f:
                f.write(payload)
    except OSError as error:
        raise Error(f"cannot write {path}: {error.strerror}") from None


def open_new_for_append(path, output_name="--out"):
    """A new file at `path` opened for appending, for outputs written record by record (each record flushed as it
    comes, so an interrupted run keeps what it finished): created exclusively, never an existing file."""
    path = os.fspath(path)
    refuse_existing(path, output_name)
    make_folder(os.path.dirname(os.path.abspath(path)), output_name)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
    except FileExistsError:
        raise Error(f"{output_name} {path} exists and relmem did not write it in this run; it is left as it is: "
                    f"choose a new path or move it away") from None
    except OSError as error:
        raise Error(f"cannot write {path}: {error.strerror}") from None
    _created.add(_real(path))
    return os.fdopen(descriptor, "a", encoding="utf-8")
