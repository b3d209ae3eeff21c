"""The sub-commands, one module each (_common.py: what several share).

A module here (but _common) defines ``register(subparsers)``, which adds its parser(s) and sets ``func`` to a function taking
the parsed arguments and returning the exit code. cli.py discovers the modules; nothing else lists them. Errors
are raised as CollplanError (one line, exit 2).
"""
from __future__ import annotations

import importlib
import pkgutil


def register_all(subparsers) -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}").register(subparsers)
