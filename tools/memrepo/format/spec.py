"""The memory file format's fixed vocabulary (stdlib only: the hot path reads it)."""

KEY_ORDER = (
    "id",
    "title",
    "description",
    "class",
    "source",
    "created",
    "updated",
    "topics",
    "entities",
    "tech",
    "aliases",
    "project",
    "status",
    "superseded_by",
    "retired_reason",
    "half_life_days",
    "verification",
    "claims",
    "session",
)
REQUIRED_KEYS = ("id", "title", "description", "class", "source", "created")
LIST_KEYS = ("topics", "entities", "tech", "aliases")
CLASSES = ("rule", "preference", "fact", "project", "event", "reference")
SOURCES = ("user", "agent", "capture", "import")
STATUSES = ("active", "superseded", "retired")
VERIFICATION_STATUSES = ("verified", "unverified", "unchecked")

# None: never decays (a rule the user gave never fades).
HALF_LIFE_DAYS: dict[str, float | None] = {
    "rule": None,
    "preference": None,
    "project": 150.0,
    "fact": 365.0,
    "event": 60.0,
    "reference": 365.0,
}

MAX_ID = 80
MAX_TITLE = 120
MAX_DESCRIPTION = 200
MAX_BODY_BYTES = 64 * 1024
