"""The prompt path's modules from one file, executed without the import system (stdlib only).

CPython 3.11's import system spends about 280,000 instructions on each module before its code
runs (its finders, locks, spec and `.pyc` checks); the prompt hook loads 26 of memrepo's, which
made the import system the largest part of the hook that memrepo owns. The bundle holds their
compiled code in one marshal file, in the order an answerable prompt finishes importing them
(each one's imports before it), and `load` executes each into its module object by hand:
1,000 memories, 1.878x -> 1.604x a bare `python -I -S -c pass` in instructions
(`python tests/bench/bench_bundle.py --callgrind`, issue 44). Codex CLI's and Gemini CLI's prompt
hooks read the same file (`use`, every prompt hook's first step), with their own few modules in it.

It is a cache of compiled code, and is trusted as one: it is written by memrepo into a folder
the user owns (the plugin's data folder beside its `pycache`, or the package's `__pycache__`),
never read from a memory repository, and `load` takes it only when
- it is a regular file of this user that no one else may write,
- it was written by this interpreter (its version and cache tag) in this format, from the
  package the hook runs (a plugin's data folder outlives its versions), and
- every module's source still has the size and modification time it was compiled from.
Otherwise, or when anything fails while it runs, nothing of it stays in `sys.modules` and the
hook imports memrepo as it always did. `write` makes it (`python -I -S bundle.py FOLDER`).
"""

import marshal
import sys

FORMAT = 2  # 2: the modules only some hooks load kept marshalled (SOME_HOOKS)
# An answerable prompt's modules in the order their imports finish, and the previous turn's
# reader (a follow-up's); tests/test_bundle.py checks a real hook run of each agent loads no other.
MODULES = (
    "memrepo", "memrepo.claude", "memrepo.base", "memrepo.base._fast", "memrepo.recall", "memrepo.recall.fence",
    "memrepo.claude.hookio", "memrepo.base.paths", "memrepo.recall.frames", "memrepo.recall.porter",
    "memrepo.recall.clean", "memrepo.recall.query", "memrepo.recall.spans", "memrepo.recall.secretish",
    "memrepo.recall.decide", "memrepo.recall.log", "memrepo.claude.prompt_hook", "memrepo.recall.transcript_tail",
    "memrepo.base.projects", "memrepo.recall.noisy", "memrepo.recall.sources", "memrepo.recall.calibrate",
    "memrepo.recall.search", "memrepo.recall.rank", "memrepo.recall.lexicon", "memrepo.recall.citations",
    # What only some prompt hooks load (`use`), served to the import system: Codex CLI's and
    # Gemini CLI's own modules (`memrepo install claude`'s hook runs `prompt_main` as the plugin does).
    "memrepo.agents", "memrepo.agents.codex", "memrepo.agents.codex.handlers", "memrepo.agents.codex.tail",
    "memrepo.agents.gemini", "memrepo.agents.gemini.handlers", "memrepo.agents.gemini.commands",
    "memrepo.agents.gemini.tail",
)
# Every prompt runs these (up to the prompt hook itself, in MODULES' order); the rest only a prompt
# that reaches the cache does, so they are served to the import system when it asks (`_Finder`):
# a conversational prompt runs none of them.
EVERY_PROMPT = MODULES.index("memrepo.claude.prompt_hook") + 1
# A prompt that reaches the cache runs all of these, up to SOME_HOOKS (the previous turn's reader
# before them only a follow-up does): the first of them the import system asks for runs them all by
# hand, so its work of ~100,000 instructions a module is paid once, not eight times.
TOGETHER = MODULES.index("memrepo.base.projects")
# From here on they stay marshalled in the bundle until one is asked for: Claude Code's plugin hook
# never asks, and unmarshalling them cost it ~0.3 M instructions a prompt.
SOME_HOOKS = MODULES.index("memrepo.agents")
# So does the previous turn's reader, which only a follow-up runs: unmarshalling it cost every
# other prompt ~0.12 M instructions (issue 44).
FOLLOW_UP = MODULES.index("memrepo.recall.transcript_tail")
MAX_BYTES = 4 * 1024 * 1024  # the bundle is ~0.3 MB; a file past this is no bundle of ours


def file_name() -> str:
    """The bundle's name for this interpreter, in the folder that holds it."""
    return f"prompt-path.{sys.implementation.cache_tag}.marshal"


def path(tools: str) -> str:
    """Where this interpreter keeps the bundle of the memrepo package in `tools`: beside its
    compiled code, in `-X pycache_prefix`'s folder (the plugin's data folder) when it has one,
    else in the package's `__pycache__`."""
    prefix = sys.pycache_prefix
    return (prefix if prefix else tools + "/memrepo/__pycache__") + "/" + file_name()


def _header(tools: str) -> tuple:  # type: ignore[type-arg]
    # `tools`: the folder whose package it was compiled from. A plugin's data folder outlives its
    # versions, each in a folder of its own: an older version's bundle is never this one's.
    return (FORMAT, sys.implementation.cache_tag, sys.version, tools)


def _source(tools: str, name: str) -> "tuple[str, bool]":
    base = tools + "/" + name.replace(".", "/")
    import posix

    try:
        posix.stat(base + "/__init__.py")
        return base + "/__init__.py", True
    except OSError:
        return base + ".py", False


def _valid(path: str, tools: str) -> "list | None":  # type: ignore[type-arg]
    """The bundle's items when `load` may run them: a regular file of this user's that no one else
    may write, this interpreter's and this package's, every source unchanged; else None."""
    import posix

    try:
        st = posix.stat(path)
        if st.st_uid != posix.geteuid() or st.st_mode & 0o022 or (st.st_mode & 0o170000) != 0o100000 \
                or st.st_size > MAX_BYTES:
            return None
        with open(path, "rb") as fh:
            header, items = marshal.loads(fh.read())
        if header != _header(tools):
            return None
        for _name, _package, source, size, mtime, _code in items:
            found = posix.stat(source)
            if found.st_size != size or found.st_mtime_ns != mtime:
                return None
    except Exception:  # noqa: BLE001 — any doubt about the file means the import system instead
        return None
    return items  # type: ignore[no-any-return]


def _run(items: "list[tuple]") -> None:  # type: ignore[type-arg]
    """Execute each item's code into a new module in `sys.modules`, in order (each one's imports
    before it), skipping those already there; on any failure none of them stays, and it raises."""
    added: "list[str]" = []
    module_type = type(sys)
    try:
        for name, package, source, _size, _mtime, code in items:
            if name in sys.modules:
                continue
            module = module_type(name)
            module.__file__ = source
            module.__package__ = name if package else name.rpartition(".")[0]
            if package:
                module.__path__ = [source.rpartition("/")[0]]
            sys.modules[name] = module
            added.append(name)
            parent, _, child = name.rpartition(".")
            if parent:
                setattr(sys.modules[parent], child, module)
            exec(code, module.__dict__)
    except BaseException:
        for name in added:
            sys.modules.pop(name, None)
        raise


def load(path: str, tools: str) -> bool:
    """Execute the bundle at `path` of the memrepo package in `tools` into `sys.modules`; False,
    with nothing of it left behind, when it is missing, not this user's alone, foreign (another
    interpreter's, another package's), stale or broken."""
    items = _valid(path, tools)
    if items is None:
        return False
    try:
        _run(items[:EVERY_PROMPT])
    except BaseException:  # noqa: BLE001 — nothing of it stays: the import system loads them again
        return False
    sys.meta_path.insert(0, _Finder(items[EVERY_PROMPT:], items[TOGETHER:SOME_HOOKS]))  # type: ignore[arg-type]
    return True


def use() -> bool:
    """What every prompt hook does before it imports anything else of memrepo (Claude Code's, Codex's,
    Gemini's, however it was started): `load` the bundle of the package this module is in, from
    where this interpreter keeps it; False, and the import system loads memrepo as ever, when
    `load` refuses it or anything fails."""
    try:
        tools = __file__.rsplit("/", 3)[0]
        return load(path(tools), tools)
    except BaseException:  # noqa: BLE001 — a hook fails open, and the import system is always there
        return False


class _Finder:
    """The rest of the bundle, for the import system: a module's spec and its code, with none of
    the path search and `.pyc` reads of a module found on disk. The modules of `together` are run
    by hand, all of them, when it asks for the first (`create_module`): it then finds the others in
    `sys.modules`."""

    def __init__(self, items: "list[tuple]", together: "list[tuple]") -> None:  # type: ignore[type-arg]
        self._items = {item[0]: item for item in items}
        self._together = together
        self._names = {item[0] for item in together}

    def find_spec(self, name: str, path: object = None, target: object = None) -> object:
        item = self._items.get(name)
        if item is None:
            return None
        spec = sys.modules["_frozen_importlib"].ModuleSpec(name, self, origin=item[2], is_package=item[1])
        spec.has_location = True
        if item[1]:
            spec.submodule_search_locations = [item[2].rpartition("/")[0]]
        return spec

    def create_module(self, spec: object) -> object:
        name = spec.name  # type: ignore[attr-defined]
        if name not in self._names:
            return None
        _run(self._together)
        return sys.modules[name]

    def exec_module(self, module: "type(sys)") -> None:  # type: ignore[valid-type]
        name = module.__name__  # type: ignore[attr-defined]
        if name not in self._names:
            code = self._items[name][5]
            exec(marshal.loads(code) if type(code) is bytes else code, module.__dict__)  # type: ignore[attr-defined]


def write(folder: str, tools: "str | None" = None) -> str:
    """Compile MODULES from the `tools` folder holding the memrepo package (this one's by
    default) into the bundle in `folder` (created 0700), written whole or not at all; its path."""
    import os

    tools = tools or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    items = []
    for i, name in enumerate(MODULES):
        source, package = _source(tools, name)
        st = os.stat(source)
        with open(source, "rb") as fh:
            # without docstrings (~45 KB of the ~290 KB read every prompt, 0.15 M instructions) and
            # asserts: no module of the prompt path reads a docstring or asserts (tests/test_bundle.py)
            code = compile(fh.read(), source, "exec", dont_inherit=True, optimize=2)
        kept = i >= SOME_HOOKS or i == FOLLOW_UP  # unmarshalled only when asked for
        items.append((name, package, source, st.st_size, st.st_mtime_ns, marshal.dumps(code) if kept else code))
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, file_name())
    tmp = f"{path}.tmp-{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(marshal.dumps((_header(tools), items)))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def current(path: str, tools: str) -> bool:
    """Whether the bundle at `path` would be loaded for the package in `tools`."""
    return _valid(path, tools) is not None


if __name__ == "__main__":  # `python -I -S [-X pycache_prefix=P] …/memrepo/base/bundle.py`: the hooks' interpreter
    _tools = __file__.rsplit("/", 3)[0]
    print(write(path(_tools).rpartition("/")[0], _tools))
