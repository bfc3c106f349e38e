"""The offline passes, where a model may run: the model runner, capture, enrich, the curator,
the verifier, the profile and skill drafts.

May import: the standard library, `memrepo.errors`, `memrepo.proc`, and the layers below:
`base`, `recall`, `format`, `vcs`, `store`. Never imported on a hook's path.
"""
