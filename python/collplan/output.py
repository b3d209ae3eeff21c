"""Writing the files commands produce: completely or not at all, the way their users expect; and reading the
text files they take."""
from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from ._core import CollplanError


def printable(text, limit: int | None = None) -> str:
    """`text` as a terminal should show what a user or a file supplied: control characters, ANSI escapes and NUL
    escaped (\\n, \\x1b, ...), and at most `limit` characters (the rest counted, not echoed)."""
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(text))
    if limit is not None and len(text) > limit:
        return f"{text[:limit - 3]}... ({len(text)} characters)"
    return text


def atomic_write(path: str, data: str | bytes) -> None:
    """Write an output file completely or not at all, the way its user expects:

    - ``-`` is standard output;
    - a symbolic link is followed: its target is written and the link stays;
    - a device, FIFO or other non-regular file is written through, never replaced by a regular file;
    - a regular file, or a new one, is written beside itself and renamed into place, keeping the old file's
      permissions;
    - a missing directory, a read-only file (no owner write bit: refused even as root), a directory, or a write
      that fails (ENOSPC, EIO) is a CollplanError that names the path and the reason; nothing is half-written.
    """
    raw = data.encode() if isinstance(data, str) else data
    if path == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(raw)
        sys.stdout.buffer.flush()
        return
    target = Path(os.path.realpath(path))
    try:
        st = target.stat()
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise CollplanError(f"cannot write {path}: {e.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise CollplanError(f"cannot write {path}: it is a directory (allowed: a file, a device or -)")
    if st is not None and not stat.S_ISREG(st.st_mode):  # a device, FIFO or socket: written through
        try:
            with open(target, "wb") as f:
                f.write(raw)
        except OSError as e:
            raise CollplanError(f"cannot write {path}: {e.strerror}") from None
        return
    if not target.parent.is_dir():
        raise CollplanError(f"cannot write {path}: directory {target.parent} does not exist")
    if st is not None and not st.st_mode & stat.S_IWUSR:
        raise CollplanError(f"cannot write {path}: the file is read-only (allowed: a writable file or a new one)")
    umask = os.umask(0)
    os.umask(umask)
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~umask
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    except OSError as e:
        raise CollplanError(f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise CollplanError(f"cannot write {path}: {e.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
