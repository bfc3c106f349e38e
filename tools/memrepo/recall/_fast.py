"""`memrepo.base._fast` under the name it had before the base layer (issue 40): the very same
module object, for the importers tests/test_layers.py lists in SHIMS until they import the base.
`from memrepo.recall import _fast` is served by the package's `__getattr__` without this file; it is
here for type checkers and for `import memrepo.recall._fast`."""

import sys

from memrepo.base import _fast as _moved

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memrepo.base._fast import *  # noqa: F403

sys.modules[__name__] = _moved
