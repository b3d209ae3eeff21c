"""Nicol & Bokhari, Figure 3: complete exchange on a 64-node iPSC/860 (d = 6), the model's predicted curves."""
from __future__ import annotations

from . import Claim, Report
from ._mce import crossover, run_mce

NAME = "mce-d6"
SUMMARY = "Nicol & Bokhari Fig. 3: DE, SE and multiphase exchange on a 64-node iPSC/860 (model)"
ABOUT = 0.25   # "about N bytes": within 25 %
TIME = 0.15    # "about N ms": within 15 %


def _text_claims(lines, env, closed) -> list[Claim]:
    order = [n for _, n in env]
    where = ", then ".join(f"{n} from {m:.1f} B" for m, n in env)
    x = crossover(env, "(3,3)", "DE")
    de, se = closed("DE", 32), closed("SE", 32)
    best = min((n for n in lines if n.startswith("(")), key=lambda n: closed(n, 32))
    mce = closed(best, 32)
    return [
        Claim("two partitions are optimal: (3,3) and (6) (= DE)", "(3,3), DE", ", ".join(sorted(set(order))),
              detail=f"model: {where}"),
        Claim("(6) (= DE) is optimal beyond about 140 B: the crossover", 140.0, x if x is not None else float("nan"),
              "~", ABOUT, "B", f"model: {where}"),
        Claim("at 32 B DE costs about 17 ms", 17.0, de * 1e3, "~", TIME, "ms"),
        Claim("at 32 B SE costs about 17 ms", 17.0, se * 1e3, "~", TIME, "ms"),
        Claim("at 32 B DE and SE cost about the same: SE / DE", 1.0, se / de, "~", TIME),
        Claim("at 32 B the optimal multiphase exchange costs about 8 ms", 8.0, mce * 1e3, "~", TIME, "ms",
              f"the optimum is {best}"),
        Claim("that is a factor of two over DE and SE: min(DE, SE) / optimum", 2.0, min(de, se) / mce, ">=", TIME,
              detail=f"DE / {best} = {de / mce:.2f}, SE / {best} = {se / mce:.2f}"),
    ]


def run(quick: bool) -> Report:
    return run_mce(6, "ipsc860", quick, _text_claims)
