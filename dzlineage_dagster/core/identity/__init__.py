"""Dataset identity: the one name each dataset has in the graph, and every other name a
producer may send for it.

:mod:`.kafka` names a topic of the MSK cluster (one namespace per cluster, whatever listener,
alias or connector property a producer used); :mod:`.sources` names a captured source table
(Debezium's naming, with a database host's aliases mapped to its canonical host). The sync,
the relay and ``trace`` call these and never build such names themselves.

Imports: :mod:`..connectors`, :mod:`..text` (how an error echoes a value).
"""
