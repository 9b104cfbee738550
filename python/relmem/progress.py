"""Progress of building or refreshing a memory, one database at a time. Every memory's build() and refresh() take
`progress`: False or None (silent), True (a tqdm bar on stderr) or a callable (db, done, total)."""
import sys


class ProgressBar:
    """A tqdm bar on stderr, opened at the first database and closed at the last."""

    def __init__(self, description):
        self.description = description
        self.bar = None

    def __call__(self, db, done, total):
        if self.bar is None:
            from tqdm import tqdm
            self.bar = tqdm(total=total, initial=done - 1, desc=self.description, unit="db", file=sys.stderr)
        self.bar.set_postfix_str(db, refresh=False)
        self.bar.update(1)
        if done >= total:
            self.bar.close()


def callback(progress, description):
    """The (db, done, total) callable for `progress`, or None."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return ProgressBar(description)
    if callable(progress):
        return progress
    raise TypeError(f"progress must be a bool or a callable (db, done, total), not {type(progress).__name__}")
