"""`memrepo serve`: the local web page over one memory repository."""

from __future__ import annotations

import click

from memrepo.cli.main import _fail_friendly, _repo


@click.command()
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port on 127.0.0.1 (0: any free one).")
@click.option("--read-only", is_flag=True, help="Show everything, change nothing: no accept, reject or undo.")
@click.pass_context
@_fail_friendly
def serve(ctx: click.Context, port: int, read_only: bool) -> None:
    """Browse the memory in a local web page: memories and their history, recall, review, runs.

    Listens on 127.0.0.1 only and answers only to 127.0.0.1 or localhost in the Host header.
    The buttons (review accept/reject, undo) do exactly what the commands do, each a commit;
    they carry a token this server made at start, so no other page can press them. Ctrl-C stops.

    \b
    Example:
      memrepo serve
      memrepo serve --port 0 --read-only
    """
    from memrepo.store import memories as store
    from memrepo.web import server

    repo = store.require_repo(_repo(ctx))
    server.serve(repo, port, read_only, ready=lambda url: click.echo(f"memrepo serve: {url}  (Ctrl-C stops)"))


def register(group: click.Group) -> None:
    group.add_command(serve)
