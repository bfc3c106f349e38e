"""`memrepo serve`: the local web page over one memory repository."""

from __future__ import annotations

import click

from memrepo.cli.common import _fail_friendly, _repo


@click.command()
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port on 127.0.0.1 (0: any free one).")
@click.option("--read-only", is_flag=True, help="Show everything, change nothing: no accept, reject, undo, share or forget.")
@click.option("--forge", "forge_name", metavar="HOST/OWNER/REPO",
              help="A team remote's forge, for the pull requests of Share and Propose to forget, when its URL names none.")
@click.option("--login-url", is_flag=True,
              help="Start nothing: print a new one-time login URL for the server already running on --port.")
@click.pass_context
@_fail_friendly
def serve(ctx: click.Context, port: int, read_only: bool, forge_name: str | None, login_url: bool) -> None:
    """Browse the memory in a local web page: memories and their history, recall, review, runs.

    Prints a one-time login URL: open it in your browser. It logs that browser in (a cookie good
    until the server stops or the browser closes) and works once; for another browser, or after
    closing this one, run `memrepo serve --login-url --port PORT` in another terminal as the same user. Every
    page and button needs the login, so other users of this machine, who can reach the port,
    see and change nothing. The login URL is made from a secret only you can read
    ($XDG_CONFIG_HOME or ~/.config, then memrepo/serve-secret; mode 600, written on first use):
    keep it to yourself. A login URL from before the server started opens nothing.

    Listens on 127.0.0.1 only and answers only to 127.0.0.1 or localhost in the Host header.
    The buttons (review accept/reject, undo) do exactly what the commands do, each a commit;
    on a team's or the project's memory, Propose to forget does what `memrepo forget` does
    there, and on one of yours, Share to TEAM / project what `memrepo share` does (the project
    is the code repository the server starts in). They take only posts from this server's own
    pages. Ctrl-C stops.

    \b
    Example:
      memrepo serve
      memrepo serve --port 0 --read-only
      memrepo serve --login-url --port 8765
    """
    from memrepo.store import memories as store
    from memrepo.web import auth, server

    if login_url:
        if port == 0:
            raise click.UsageError("--login-url needs the --port of the running server (its URL shows it)")
        click.echo(f"http://127.0.0.1:{port}/login?code={auth.mint(auth.load_secret(create=False))}")
        return
    repo = store.require_repo(_repo(ctx))
    server.serve(repo, port, read_only, ready=lambda url: click.echo(f"memrepo serve: open {url}  (Ctrl-C stops)"),
                 forge=forge_name)


def register(group: click.Group) -> None:
    group.add_command(serve)
