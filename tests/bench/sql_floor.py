"""The floor under the recall hook: a process that does only what no Python hook on this cache
can skip, and nothing of memrepo's own.

Started exactly as hooks/run starts the hook (`python -I -S`), it loads the `_sqlite3` C module
with the same functools stand-in the hook uses, opens the cache read-only, runs the statements
the hook ran for one prompt (recorded by bench_hook.py, in `marshal` form: no json import), writes
a line and leaves as the hook leaves (os._exit, no interpreter teardown). The hook's time above
this floor is memrepo's Python: its imports, the query, the ranking, the log and the output.

    python -I -S tests/bench/sql_floor.py CACHE.sqlite3 STATEMENTS.marshal
"""

import marshal
import sys

import posix

stand_in = type(sys)("functools")
stand_in.lru_cache = lambda *a, **k: (lambda f: f)  # type: ignore[attr-defined]
sys.modules["functools"] = stand_in
import _sqlite3  # noqa: E402

del sys.modules["functools"]

with open(sys.argv[2], "rb") as fh:
    statements = marshal.loads(fh.read())
db = _sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = 0
for sql, args in statements:
    rows += len(db.execute(sql, args).fetchall())
db.close()
sys.stdout.write(f"{rows}\n")
sys.stdout.flush()
posix._exit(0)
