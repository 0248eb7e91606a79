"""The sandbox endpoint (:mod:`.app`), its call log and fault rules (:mod:`.faults`), the list
of who answers which operation (:mod:`.operations`) and the HTTP client of its admin paths
(:mod:`.control`)."""
