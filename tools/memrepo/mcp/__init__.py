"""`memrepo mcp`: the memory for agents without prompt hooks, over the Model Context Protocol.

`tools` holds what each MCP tool does, as plain functions over the library (the same calls the
CLI makes); `server` wires them into the official MCP SDK's stdio server and is the only module
that imports `mcp`, an optional extra (`pip install 'memrepo[mcp]'`), so neither the prompt path
nor the rest of the CLI ever loads it.

May import: the standard library, `memrepo.errors`, `memrepo.proc`, and every layer below
(`base` … `web`); the `mcp` SDK in `server` only.
"""
