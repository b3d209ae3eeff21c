"""Machine files: TOML descriptions of real machines (topology + model constants with units and sources)."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from . import _core
from ._core import CollplanError


@dataclass(frozen=True)
class Machine:
    name: str
    description: str
    topology: str          # default topology spec ("" if none)
    model: str             # model spec understood by the core, e.g. "hockney:alpha=1.6us,beta=0.3ns/B"
    sources: dict = field(default_factory=dict)
    path: str = ""
    network: str = ""      # simulator parameters from the [network] table, e.g. "mtu=2048B,vcs=2" ("" = defaults)


def machine_names() -> list[str]:
    """Names of the machine files bundled with collplan."""
    return sorted(p.name[:-5] for p in resources.files(__package__).joinpath("machines").iterdir()
                  if p.name.endswith(".toml"))


def _model_spec(model: dict, where: str) -> str:
    if "kind" not in model:
        raise CollplanError(f"machine file {where}: [model] needs a 'kind' (hockney, wormhole, circuit, loggp)")
    keys = [k for k in model if k != "kind"]
    spec = model["kind"] + ":" + ",".join(f"{k}={model[k]}" for k in keys)
    return _core.check_model(spec)  # canonical form; raises CollplanError naming the bad key or value


def _network_spec(network, where: str) -> str:
    """The [network] table (simulator parameters, docs/simulation.md) as a canonical spec string."""
    if network is None:
        return ""
    if not isinstance(network, dict):
        raise CollplanError(f"machine file {where}: [network] must be a table")
    spec = ",".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in network.items())
    try:
        return _core.check_network(spec)
    except CollplanError as e:
        raise CollplanError(f"machine file {where}: {e}") from None


def read_machine_text(path: str) -> str:
    """A machine file's text, refused when larger than limits.MACHINE_MAX_BYTES (never read forever)."""
    from . import limits
    return limits.read_text(path, limits.MACHINE_MAX_BYTES, "machine file", from_limit=False)


def resolve_machine(machine: "str | Machine | None" = None, model: str | None = None) -> Machine:
    """The machine of a call, resolved once: exactly one of `machine` (a Machine as it is; a bundled name or a TOML
    file, loaded) and `model` (a model spec: a machine of that model with no topology and no [network] table)."""
    if (machine is None) == (model is None):
        raise CollplanError("give exactly one of a machine (name or file) and a model spec")
    if isinstance(machine, Machine):
        return machine
    if machine is not None:
        return load_machine(machine)
    spec = _core.check_model(model)
    return Machine(name=spec, description="", topology="", model=spec)


def load_machine(name_or_path: str) -> Machine:
    """Load a bundled machine by name (see machine_names()) or a TOML file by path."""
    path = Path(name_or_path)
    if not path.suffix == ".toml" or not path.exists():
        if name_or_path in machine_names():
            path = Path(str(resources.files(__package__).joinpath("machines", name_or_path + ".toml")))
        else:
            raise CollplanError(f"unknown machine '{name_or_path}' (allowed: a .toml file or one of "
                                f"{', '.join(machine_names())})")
    try:
        data = tomllib.loads(read_machine_text(str(path)))
    except OSError as e:
        raise CollplanError(f"cannot read machine file {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise CollplanError(f"cannot read machine file {path}: {e}") from None
    except RecursionError:
        raise CollplanError(f"machine file {path}: arrays or tables nested too deeply (allowed: the tables of "
                            "docs/calibration.md)") from None
    if not isinstance(data.get("model"), dict):
        raise CollplanError(f"machine file {path}: missing [model] table")
    topo = str(data.get("topology", ""))
    if topo:
        _core.Topology.parse(topo)
    return Machine(name=str(data.get("name", path.stem)), description=str(data.get("description", "")),
                   topology=topo, model=_model_spec(data["model"], str(path)),
                   sources=dict(data.get("sources", {})), path=str(path),
                   network=_network_spec(data.get("network"), str(path)))
