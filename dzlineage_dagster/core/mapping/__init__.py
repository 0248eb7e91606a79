"""Schema -> DataZone asset records in SSM Parameter Store.

:mod:`.ssm_names` (where a record lives, what it holds, how it is encoded) and :mod:`.pack`
(the packed layout: many records a parameter).

Imports: :mod:`..text` (how an error echoes a value).
"""
