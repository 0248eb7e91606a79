"""What AWS allows: published quotas with their sources (:mod:`.quotas`), the client's and
the sandbox's token buckets (:mod:`.rate_limit`), independent calls made at once
(:mod:`.concurrency`), and DataZone's authorization policies and project membership
(:mod:`.authorization`).

Imports: :mod:`..text` (how an error echoes a value).
"""
