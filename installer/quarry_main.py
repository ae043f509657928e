"""Entry point of the standalone bundle: the same `quarry` command as the pip-installed one."""

import multiprocessing
import os
import sys

from desktop_app.search.bounded_re import CHILD_ARGUMENT, serve


def restore_library_path() -> None:
    """Give the programs Quarry starts (git, xdg-open, the user's editor) the user's own library path.

    On Linux the bundle's bootloader points LD_LIBRARY_PATH at the bundle (keeping any earlier value in
    LD_LIBRARY_PATH_ORIG); a child that inherited it could load the bundle's Qt or GLib instead of its own.
    This process is unaffected: the dynamic loader reads the variable only once, at start.
    """
    original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is not None:
        os.environ["LD_LIBRARY_PATH"] = original
    else:
        os.environ.pop("LD_LIBRARY_PATH", None)


if __name__ == "__main__":
    # A big tree's parse processes (indexing/parse_pool.py) are this executable started again: freeze_support
    # makes such a start run the process's work instead of the app.
    multiprocessing.freeze_support()
    if sys.argv[1:] == [CHILD_ARGUMENT]:  # text mode's child process for Python's `re` (search/bounded_re.py)
        sys.exit(serve())
    # Imported only now: the regex child needs none of the app (0.35-0.40 s of imports at each of its starts).
    from desktop_app.launch import main

    if sys.platform.startswith("linux"):
        restore_library_path()
    sys.exit(main())
