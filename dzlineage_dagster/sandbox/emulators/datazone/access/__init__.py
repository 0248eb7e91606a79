"""Who may do what in an emulated DataZone domain.

- :mod:`.authorization`: domain units, authorization policy grants and project memberships, and
  the checks DataZone makes with them before a type, glossary or asset is created;
- :mod:`.policies`: the operations on them (a mixin of the emulator).
"""
