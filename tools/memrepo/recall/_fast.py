"""The few `os` calls the prompt path makes, without importing `os` (stdlib only).

The hooks start Python with -S, so nothing has imported `os` yet; `import os` then costs about
a millisecond of a hook that has ~6 ms to spare (its environ mapping pulls in
`_collections_abc`). On POSIX the built-in `posix` module does the same work; elsewhere these
are plain `os` calls. Paths are strings; the environment is read as `os.environ` would
decode it.
"""

import sys

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
fstat = _os.fstat
replace = _os.replace
open_fd = _os.open
write = _os.write
close = _os.close
_exit = _os._exit
O_WRONLY = _os.O_WRONLY
O_APPEND = _os.O_APPEND
O_CREAT = _os.O_CREAT
