"""A registry schema's columns, and what a new version of it changes.

:mod:`.avro` (also the column model the others produce), :mod:`.json_schema`,
:mod:`.protobuf`, and :mod:`.impact` (a version compared with the previous one).

Imports: :mod:`..ownership` (an impact report names the owners to notify).
"""
