"""Nicol & Bokhari, Figure 2: complete exchange on a 32-node iPSC/860 (d = 5), the model's predicted curves."""
from __future__ import annotations

from . import Claim, Report
from ._mce import crossover, run_mce

NAME = "mce-d5"
SUMMARY = "Nicol & Bokhari Fig. 2: DE, SE and multiphase exchange on a 32-node iPSC/860 (model)"
ABOUT = 0.25   # "about N bytes": within 25 %
TIME = 0.15    # "about N ms": within 15 %


def _text_claims(lines, env, closed) -> list[Claim]:
    order = [n for _, n in env]
    x = crossover(env, "(2,3)", "DE")
    where = ", then ".join(f"{n} from {m:.1f} B" for m, n in env)
    detail = f"model: {where}" + (f"; crossover {x:.1f} B ({(x - 100) / 100:+.0%} vs 100 B)" if x else "")
    de1 = closed("DE", 1)
    return [Claim("the optimal partitions in turn are (2,3), then DE", "(2,3), DE", ", ".join(order), detail=detail),
            Claim("(2,3) is optimal below about 100 B, after which DE is better: the crossover", 100.0,
                  x if x is not None else float("nan"), "~", ABOUT, "B", detail),
            Claim("DE with 1-byte messages costs about 7 ms (the paper's measured value)", 7.0, de1 * 1e3, "~", TIME,
                  "ms")]


def run(quick: bool) -> Report:
    return run_mce(5, "ipsc860-32", quick, _text_claims)
