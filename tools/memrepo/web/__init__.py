"""`memrepo serve`: a local web page over one memory repository (127.0.0.1 only).

`html` renders (every value escaped), `pages` builds each page from the same library calls the
CLI makes, `server` is a small standard-library HTTP server: Host header checked, every page and
action for the owner's session alone (`auth`: a 0600 secret, a one-time login URL, a cookie),
an Origin check and a session token on every state-changing request, read-only by flag. No
build step, no script from the network: the pages are plain HTML forms with one inline style
sheet.

May import: the standard library, `memrepo.errors`, `memrepo.proc`, and every layer below
(`base` … `evaluation`).
"""
