"""git's merge driver for memory files: `python -I -m memrepo.vcs.mergedriver %O %A %B %P`.

`memrepo init` registers it in the untracked `.git/config` (`merge.memrepo.driver`, see
`hookwire.wire_merge_driver`) and routes `memory/*.md` to it in `.gitattributes`. git calls it
with three temporary files (base, ours, theirs) and the path; the result goes into the ours
file (%A). A clean merge (`format.merge`) exits 0. A real conflict writes git's usual
`<<<<<<<` markers around the conflicting lines (`git merge-file`; the whole file when a line
merge sees no conflict) and exits 1, so git records a normal
conflict. A file that is not a memory, or any error here, is merged as plain text, exactly as
git would without this driver: neither side is ever lost.
"""

from __future__ import annotations

import os
import sys
import tempfile

from memrepo.vcs import gitcmd

LABELS = ("ours", "base", "theirs")


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _write(path: str, data: bytes) -> None:
    """Replace the file git reads back (%A) whole: a failure midway leaves ours as it was."""
    tmp = f"{path}.memrepo-{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def merge_file(ours: str, base: str, theirs: str) -> tuple[int, bytes]:
    """`git merge-file -p` of three files: (number of conflicts, or < 0 on an error; merged bytes)."""
    rc, out, err = gitcmd.run_git("merge-file", "-p", "-L", LABELS[0], "-L", LABELS[1], "-L", LABELS[2],
                                  ours, base, theirs, cwd=os.getcwd())
    # merge-file exits with the number of conflicts (capped at 127), 255 on an error such as a binary file.
    if rc < 0 or rc > 127:
        return -1, err
    return rc, out


def text_merge(base: str, ours: str, theirs: str) -> int:
    """What git does without this driver: a line merge with conflict markers into `ours`."""
    conflicts, out = merge_file(ours, base, theirs)
    if conflicts < 0:
        # git cannot merge these as text: leave ours in place; the conflict keeps all three in the index.
        return 1
    _write(ours, out)
    return 0 if conflicts == 0 else 1


def _merge_bodies(base: str, ours: str, theirs: str) -> str | None:
    """The bodies as git would merge them as lines; None when they conflict."""
    with tempfile.TemporaryDirectory(prefix="memrepo-merge-") as tmp:
        files = []
        for name, text in zip(LABELS, (ours, base, theirs)):
            files.append(os.path.join(tmp, name))
            with open(files[-1], "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        conflicts, out = merge_file(files[0], files[1], files[2])
    return out.decode("utf-8") if conflicts == 0 else None


def _whole_file_conflict(ours: bytes, theirs: bytes) -> bytes:
    """Both sides between conflict markers, for a conflict git's line merge did not see."""
    def block(data: bytes) -> bytes:
        return data if data.endswith(b"\n") or not data else data + b"\n"

    return (f"<<<<<<< {LABELS[0]}\n".encode() + block(ours) + b"=======\n" + block(theirs)
            + f">>>>>>> {LABELS[2]}\n".encode())


def merge(base: str, ours: str, theirs: str, path: str) -> int:
    """Merge the three files git gave into `ours`; 0 when clean, 1 on a conflict."""
    from memrepo.format import merge as note_merge

    raw = [_read(p) for p in (base, ours, theirs)]
    try:
        texts = [data.decode("utf-8") for data in raw]
    except UnicodeDecodeError:
        return text_merge(base, ours, theirs)
    result = note_merge.merge_note(texts[0] or None, texts[1], texts[2], merge_text=_merge_bodies)
    if result.text is not None:
        _write(ours, result.text.encode("utf-8"))
        return 0
    if result.unmerged:
        return text_merge(base, ours, theirs)
    print(f"memrepo merge: {path}: both sides changed {', '.join(result.conflicts)}", file=sys.stderr)
    conflicts, out = merge_file(ours, base, theirs)
    if conflicts < 0:
        return 1
    _write(ours, out if conflicts > 0 else _whole_file_conflict(raw[1], raw[2]))
    return 1


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (3, 4):
        print("usage: python -m memrepo.vcs.mergedriver BASE OURS THEIRS [PATH]", file=sys.stderr)
        return 2
    base, ours, theirs = args[:3]
    path = args[3] if len(args) == 4 else ours
    try:
        return merge(base, ours, theirs, path)
    except Exception as exc:  # noqa: BLE001 — never lose a side: fall back to git's own text merge
        print(f"memrepo merge: {path}: {exc}; merged as text instead", file=sys.stderr)
        try:
            return text_merge(base, ours, theirs)
        except Exception as again:  # noqa: BLE001
            print(f"memrepo merge: {path}: text merge failed too ({again}); ours left as it was", file=sys.stderr)
            return 1


if __name__ == "__main__":
    raise SystemExit(main())
