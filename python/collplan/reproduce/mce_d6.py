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
        Claim("two partitions are optimal: (3,3) and (6) (= DE)", set(order) == {"(3,3)", "DE"}, f"model: {where}"),
        Claim("(6) (= DE) is optimal beyond about 140 B", x is not None and abs(x - 140) / 140 <= ABOUT,
              f"(3,3) -> DE at {x:.1f} B ({(x - 140) / 140:+.0%} vs 140 B)" if x else f"model: {where}"),
        Claim("at 32 B DE and SE cost about the same, about 17 ms",
              abs(de - se) / de <= TIME and abs(de - 17e-3) / 17e-3 <= TIME and abs(se - 17e-3) / 17e-3 <= TIME,
              f"DE {de * 1e3:.2f} ms ({(de - 17e-3) / 17e-3:+.0%}), SE {se * 1e3:.2f} ms ({(se - 17e-3) / 17e-3:+.0%})"),
        Claim("at 32 B the optimal multiphase exchange costs about 8 ms", abs(mce - 8e-3) / 8e-3 <= TIME,
              f"{best} {mce * 1e3:.2f} ms ({(mce - 8e-3) / 8e-3:+.0%})"),
        Claim("that is a factor of two over DE and SE", min(de, se) / mce >= 2 * (1 - TIME),
              f"DE / {best} = {de / mce:.2f}, SE / {best} = {se / mce:.2f}"),
    ]


def run(quick: bool) -> Report:
    return run_mce(6, "ipsc860", quick, _text_claims)
