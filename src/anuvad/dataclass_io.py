"""Plain data (parsed YAML) to typed dataclasses and back, checked, and ``a.b=c`` overrides.

Generic: it knows nothing of anuvad's settings, which live in :mod:`anuvad.config`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import types
import typing
from typing import Any, TypeVar, Union

import yaml

from anuvad.errors import ConfigError

T = TypeVar("T")


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def _convert(value: Any, tp: Any, where: str) -> Any:
    """Check ``value`` against the annotation ``tp`` and build nested dataclasses."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, found {value!r}")
        return from_plain(tp, value, where)
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list, found {value!r}")
        return [_convert(v, item_tp, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin in (Union, types.UnionType):
        for option in typing.get_args(tp):
            try:
                return _convert(value, option, where)
            except ConfigError:
                continue
        raise ConfigError(f"{where}: {value!r} matches none of {tp}")
    if tp is type(None):
        if value is not None:
            raise ConfigError(f"{where}: expected null, found {value!r}")
        return None
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, found {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, found {value!r}")
        return value
    if tp is float:
        if isinstance(value, str):
            # PyYAML reads "1e-4" (no dot) as a string; accept it as the number it means.
            with contextlib.suppress(ValueError):
                value = float(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, found {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, found {value!r}")
        return value
    raise ConfigError(f"{where}: unsupported type {_type_name(tp)}")


def from_plain(cls: type[T], data: dict[str, Any], where: str = "") -> T:
    """Build the dataclass ``cls`` from plain data, checking every key and value.

    Args:
        cls: a dataclass whose fields are bool, int, float, str, lists, unions or dataclasses.
        data: the mapping (e.g. parsed YAML).
        where: the dotted path of ``data`` in the whole document, for messages.

    Raises:
        ConfigError: an unknown key (the allowed ones are listed) or a value of the wrong type.
    """
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(
            f"{where or 'config'}: unknown key(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(names))}"
        )
    kwargs = {
        key: _convert(value, hints[key], f"{where}.{key}" if where else key)
        for key, value in data.items()
    }
    return cls(**kwargs)


def _parse_overrides(overrides: list[str]) -> list[tuple[list[str], Any]]:
    parsed = []
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} must look like key.subkey=value")
        key, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw) if raw != "" else ""
        except yaml.YAMLError as exc:
            raise ConfigError(f"override {item!r}: value is not valid YAML ({exc})") from exc
        parsed.append((key.strip().split("."), value))
    return parsed


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``a.b=c`` overrides (values parsed as YAML) to a config mapping, in place.

    A numeric part indexes a list: ``data.train.0.max_lines=1000``. The index one past the end
    appends a whole item: ``data.train.15={name: lit, format: aligned, src: a.en, tgt: a.hi}``.

    Raises:
        ConfigError: on a malformed override, an index past the end of a list, or a field of an
            item that does not exist yet.
    """
    for path, value in _parse_overrides(overrides):
        name = ".".join(path)
        node: Any = data
        for depth, part in enumerate(path):
            last = depth == len(path) - 1
            if isinstance(node, list):
                if last and part.isdigit() and int(part) == len(node):
                    node.append(value)
                    continue
                if not part.isdigit() or int(part) >= len(node):
                    raise ConfigError(
                        f"override {name}: {part!r} is not an index of a list of {len(node)} "
                        f"(index {len(node)} appends a whole item: "
                        f"{'.'.join(path[: depth + 1])}={{...}})"
                    )
                if last:
                    node[int(part)] = value
                else:
                    node = node[int(part)]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    node = node.setdefault(part, {})
            else:
                raise ConfigError(f"override {name}: {path[depth - 1]} is not a section")
    return data
