"""Every import trick of the prompt path, in one place (stdlib only, no site-packages needed).

The hooks start Python with -I -S: nothing has imported `os`, `json`, `functools` or the
`sqlite3` package yet, and each would be a measurable share of a ~20 ms hook. Three tricks do
the same work with the C modules underneath. What each saves was measured on CPython 3.11.7
(2026-12, issue 13) in a fresh `python -I -S -c '<import>'`: instructions counted by
`valgrind --tool=callgrind` above a bare start (27.7 M), and the median wall time of the import
alone over 31 runs on a shared 2-core machine:

- `os` calls through the built-in `posix` module (`getenv`, `join`, `abspath`, ... below);
- JSON through the C scanner and encoder in `_json` (`loads`, `dumps`);
- the `_sqlite3` C module without `functools` (`load_sqlite`);
- SHA-256 through CPython's own module, without OpenSSL (`sha256_hex`).

Elsewhere (Windows, a Python without `_json`) they fall back to the plain modules.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

# -- os without `import os` --------------------------------------------------------------------
# `import os`: +6.4 M instructions, 1.27 ms (its environ mapping pulls in `_collections_abc`);
# `import posix` (built in): +0.01 M, ~0 ms. Paths are strings; the environment is read as
# os.environ decodes it.

if sys.platform != "win32":
    import posix as _os

    def getenv(name: str, default: "str | None" = None) -> "str | None":
        loaded = sys.modules.get("os")
        if loaded is not None:
            # posix.environ is the environment at start; changes go through os.environ.
            return loaded.environ.get(name, default)  # type: ignore[no-any-return]
        value = _os.environ.get(name.encode())
        return default if value is None else value.decode(sys.getfilesystemencoding(), "surrogateescape")

    def join(first: str, *rest: str) -> str:
        out = first
        for part in rest:
            if part.startswith("/"):
                out = part
            elif not out or out.endswith("/"):
                out += part
            else:
                out += "/" + part
        return out

    def _normpath(path: str) -> str:
        # posixpath.normpath: collapse "", "." and ".." (POSIX keeps a leading "//").
        if not path:
            return "."
        initial = 2 if path.startswith("//") and not path.startswith("///") else int(path.startswith("/"))
        parts: "list[str]" = []
        for comp in path.split("/"):
            if comp in ("", "."):
                continue
            if comp != ".." or (not initial and not parts) or (parts and parts[-1] == ".."):
                parts.append(comp)
            elif parts:
                parts.pop()
        out = "/" * initial + "/".join(parts)
        return out or "."

    def abspath(path: str) -> str:
        return _normpath(path if path.startswith("/") else join(_os.getcwd(), path))

    def expanduser(path: str) -> str:
        if path == "~" or path.startswith("~/"):
            home = getenv("HOME")
            if home:
                return home.rstrip("/") + path[1:] or "/"
        if path.startswith("~"):
            import os.path  # "~user", or no HOME: rare; let os.path resolve it

            return os.path.expanduser(path)
        return path

    def dirname(path: str) -> str:
        head = path[: path.rfind("/") + 1]
        return head.rstrip("/") or head

    def basename(path: str) -> str:
        return path[path.rfind("/") + 1 :]

    def exists(path: str) -> bool:
        try:
            _os.stat(path)
        except (OSError, ValueError):
            return False
        return True

else:  # pragma: no cover — the hooks run on POSIX systems; Windows keeps the portable calls
    import os as _os
    import os.path as _path

    def getenv(name: str, default: "str | None" = None) -> "str | None":
        return _os.environ.get(name, default)

    join = _path.join
    abspath = _path.abspath
    expanduser = _path.expanduser
    dirname = _path.dirname
    basename = _path.basename
    exists = _path.exists

stat = _os.stat
umask = _os.umask
fstat = _os.fstat
replace = _os.replace
open_fd = _os.open
write = _os.write
close = _os.close
_exit = _os._exit
O_WRONLY = _os.O_WRONLY
O_APPEND = _os.O_APPEND
O_CREAT = _os.O_CREAT
O_TRUNC = _os.O_TRUNC
getpid = _os.getpid


# -- JSON without `import json` ----------------------------------------------------------------
# `import json`: +34.4 M instructions, 9.4 ms (it loads `re` and compiles json.decoder's
# patterns); `_json` and its C scanner: +0.66 M, 0.29 ms, for the same parsing and quoting.
try:
    import _json

    _ENCODE = _json.encode_basestring
except ImportError:  # pragma: no cover — CPython always has _json
    _json = None  # type: ignore[assignment]
    _ENCODE = None  # type: ignore[assignment]

_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
_WS = " \t\n\r"


# The attributes `_json.make_scanner` reads from a decoder, on a types.SimpleNamespace (the type of
# sys.implementation): a class statement costs every prompt ~80,000 instructions (issue 44).
_CONTEXT = type(sys.implementation)(  # type: ignore[call-arg]
    strict=True, object_hook=None, object_pairs_hook=None, parse_float=float, parse_int=int,
    parse_constant=_CONSTANTS.__getitem__, memo={})
_scan = _json.make_scanner(_CONTEXT) if _json is not None else None  # type: ignore[arg-type]  # duck-typed decoder


def loads(text: str) -> "Any":
    """Parse a JSON document (a str); raises ValueError on anything that is not exactly one value."""
    if not isinstance(text, str):
        raise ValueError(f"JSON text must be str, not {type(text).__name__}")
    if _scan is None:  # pragma: no cover
        import json

        try:
            return json.loads(text)
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None
    start = len(text) - len(text.lstrip(_WS))
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError("not JSON") from None
    except RecursionError:  # thousands of nested brackets: bounded by the interpreter's stack, refused
        raise ValueError("JSON nested too deeply") from None
    finally:
        _CONTEXT.memo.clear()
    if text[end:].strip(_WS):
        raise ValueError("extra data after the JSON value")
    return value


def _unserializable(value: "Any") -> "Any":
    raise TypeError(f"cannot serialize {type(value).__name__}")


# `_json`'s C encoder, as json.dumps(ensure_ascii=False) makes it, writes JSON data (string keys)
# as `_emit` does, without a Python call per value: the prompt hook's output and its log line
# 0.38 M -> ~0.05 M instructions (issue 44). It refuses a non-finite number, which `_emit` writes
# as null.
_ENCODER = (_json.make_encoder(None, _unserializable, _ENCODE, None, ": ", ", ", False, False, False)
            if _json is not None else None)


def dumps(value: "Any") -> str:
    """Serialize dicts (string keys), lists, strings, numbers, booleans and None (non-ASCII kept as is)."""
    if _ENCODER is None:  # pragma: no cover
        import json

        return json.dumps(value, ensure_ascii=False)
    try:
        return "".join(_ENCODER(value, 0))
    except ValueError:  # a non-finite number (or an int too long to write, which _emit refuses too)
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


# -- _sqlite3 without functools ----------------------------------------------------------------
# `import sqlite3`: +24.3 M instructions, 6.9 ms; `_sqlite3` alone (with the real functools):
# +18.0 M, 4.7 ms; `_sqlite3` with the stand-in below: +4.0 M, 1.0 ms.
def _no_cache(maxsize: int = 128, typed: bool = False) -> "Callable[[Any], Any]":
    """functools.lru_cache's shape, caching nothing."""
    return lambda fn: fn


def load_sqlite() -> "Any":
    """The `_sqlite3` C module, loaded for the prompt path.

    The C module alone: the `sqlite3` package adds datetime adapters this path never uses.
    And on CPython 3.11+ the C module's init takes `functools.lru_cache` for its statement
    cache: importing functools (with collections, operator, keyword, reprlib) is ~3 ms of a
    ~20 ms hook. Each statement here runs once per process, so a cache buys nothing: when no
    one has imported functools yet (the hook), the module gets a stand-in whose "cache"
    compiles every statement, and the stand-in leaves sys.modules right after. Anywhere else
    (the CLI, tests) functools is loaded already and nothing changes; if a Python's module
    wants more of functools than the stand-in has, it is loaded again with the real one.
    """
    if "functools" not in sys.modules and "_sqlite3" not in sys.modules:
        stand_in = type(sys)("functools")
        stand_in.lru_cache = _no_cache  # type: ignore[attr-defined]
        sys.modules["functools"] = stand_in
        try:
            import _sqlite3
            return _sqlite3
        except Exception:  # noqa: BLE001 — any failure: forget this attempt, load it plainly below
            sys.modules.pop("_sqlite3", None)
        finally:
            if sys.modules.get("functools") is stand_in:
                del sys.modules["functools"]
    import _sqlite3
    return _sqlite3


# -- SHA-256 without hashlib -------------------------------------------------------------------
# `import hashlib` loads OpenSSL (+10.5 M instructions): every prompt's log line and every lock
# hold's journal hash with CPython's own module instead (`_sha2` since 3.12, `_sha256` before;
# hashlib only in a build without either). The same digest either way.
_SHA256: "Any" = None


def sha256_hex(data: bytes) -> str:
    """hashlib.sha256(data).hexdigest(), without loading OpenSSL where CPython has its own."""
    global _SHA256
    if _SHA256 is None:
        try:
            from _sha2 import sha256 as found  # type: ignore[import-not-found]
        except ImportError:
            try:
                from _sha256 import sha256 as found  # type: ignore[import-not-found,no-redef]
            except ImportError:
                from hashlib import sha256 as found
        _SHA256 = found
    return str(_SHA256(data).hexdigest())
