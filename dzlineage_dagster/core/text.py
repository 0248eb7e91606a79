"""How an error message echoes a value it refuses."""

from __future__ import annotations

#: How many characters of a refused value an error echoes: enough to recognise it, not so many
#: that a value of 10,000 characters fills the terminal and the run's failure.
SHOWN_CHARACTERS = 80


def shown(value: object) -> str:
    """``value``'s repr for an error message; a longer one is cut to its first
    :data:`SHOWN_CHARACTERS` characters, followed by how long it is."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= SHOWN_CHARACTERS:
        return repr(value)
    return f"{text[:SHOWN_CHARACTERS]!r}... ({len(text):,} characters)"
