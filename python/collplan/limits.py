"""What a job may use: the memory limit (``--max-memory``, the ``max_memory=`` argument of the API) and bounded
reading of input files.

Every command estimates the memory a job needs before it allocates and refuses with one line naming the need and
the limit; the C++ core does the same for schedules, the verifier, the estimator and the simulators
(src/collplan/common/job.hpp). The limit defaults to a quarter of the machine's physical memory. Input files are read
through read_text(), which stops after a bound (a device like /dev/zero is not read forever).
"""
from __future__ import annotations

from . import _core
from ._core import CollplanError

WISDOM_MAX_BYTES = 16 << 20   # as kMaxWisdomBytes in src/collplan/runtime/wisdom.hpp
MACHINE_MAX_BYTES = 1 << 20   # a machine file is a few dozen lines
MATRIX_ENTRY_BYTES = 24       # a matrix entry held as Python lists, a flat copy and the core's vector
SCHEDULE_TEXT_FACTOR = 4      # a schedule takes at most about 4x its text (schedule_text_memory_bytes)
MATRIX_TEXT_FACTOR = 12       # a dense matrix takes at most about 12x its text (2 bytes per entry, "0,")


def max_memory(value=None) -> int:
    """The limit in bytes: None or 0 is the default (a quarter of the physical memory); sizes like "4GiB" are parsed."""
    if value is None or value == 0:
        return int(_core.default_max_memory())
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise CollplanError(f"max_memory {value!r} is invalid (allowed: a size such as 4GiB, or bytes >= 1)")
    n = value if isinstance(value, int) else _core.parse_size(value)
    if n < 1:
        raise CollplanError(f"max_memory {value} is invalid (allowed: a size such as 4GiB, or bytes >= 1)")
    return n


def parse_max_memory(text: str) -> int:
    """argparse type of --max-memory (its error is argparse's one line: "argument --max-memory: <why>")."""
    import argparse
    try:
        n = _core.parse_size(text)
    except CollplanError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"size '{text}' is invalid (allowed: a size of at least 1 byte, such as 4GiB)")
    return n


def require(nbytes: float, what: str, limit=None) -> None:
    """Raise CollplanError "<what> needs about X (limit Y, --max-memory)" when nbytes exceeds the limit."""
    _core.require_memory(float(nbytes), what, max_memory(limit))


def read_text(path: str, max_bytes: int, what: str, from_limit: bool = True) -> str:
    """The UTF-8 text of a file (a leading byte-order mark dropped), reading at most max_bytes + 1 bytes: a larger file (or an endless device) is an
    error naming the bound (from_limit: the bound follows from --max-memory). OSError propagates."""
    with open(path, "rb") as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        note = " (a bound that follows from --max-memory)" if from_limit else ""
        raise CollplanError(f"{what} {path} is larger than {_core.approx_bytes(max_bytes)}{note}")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")  # a byte-order mark is not data
    except UnicodeDecodeError as e:
        raise CollplanError(f"{what} {path}: not a text file (byte 0x{data[e.start]:02x} at offset {e.start} is not "
                            "UTF-8)") from None
