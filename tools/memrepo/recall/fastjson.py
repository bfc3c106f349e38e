"""JSON for the prompt path without importing `json` (stdlib only).

`import json` pulls in `re` and friends, several milliseconds on every prompt; the C scanner
and string encoder in `_json` do the same work without them. Falls back to `json` where
`_json` is missing.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    import _json

    _ENCODE = _json.encode_basestring
except ImportError:  # pragma: no cover — CPython always has _json
    _json = None  # type: ignore[assignment]
    _ENCODE = None  # type: ignore[assignment]

_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
_WS = " \t\n\r"


class _Context:
    """The attributes `_json.make_scanner` reads from a decoder."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)
    memo: "dict[str, Any]" = {}


_scan = _json.make_scanner(_Context()) if _json is not None else None  # type: ignore[arg-type]  # duck-typed decoder


def loads(text: str) -> "Any":
    """Parse a JSON document (a str); raises ValueError on anything that is not exactly one value."""
    if not isinstance(text, str):
        raise ValueError(f"JSON text must be str, not {type(text).__name__}")
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WS))
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError("not JSON") from None
    finally:
        _Context.memo.clear()
    if text[end:].strip(_WS):
        raise ValueError("extra data after the JSON value")
    return value


def dumps(value: "Any") -> str:
    """Serialize dicts, lists, strings, numbers, booleans and None (non-ASCII kept as is)."""
    if _ENCODE is None:  # pragma: no cover
        import json

        return json.dumps(value, ensure_ascii=False)
    parts: list[str] = []
    _emit(value, parts)
    return "".join(parts)


def _emit(value: "Any", out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_ENCODE(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, (int, float)):
        out.append(repr(value) if value == value and value not in (float("inf"), float("-inf")) else "null")
    elif isinstance(value, dict):
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            out.append(", " if i else "")
            out.append(_ENCODE(str(k)))
            out.append(": ")
            _emit(v, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, v in enumerate(value):
            out.append(", " if i else "")
            _emit(v, out)
        out.append("]")
    else:
        raise TypeError(f"cannot serialize {type(value).__name__}")
