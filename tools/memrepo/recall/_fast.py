"""`memrepo.base._fast`, under the name it had before the base layer (issue 40): the very same
module object, for the importers tests/test_layers.py lists in SHIMS until they import the base."""

import sys

from memrepo.base import _fast as _moved

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memrepo.base._fast import *  # noqa: F403

sys.modules[__name__] = _moved
