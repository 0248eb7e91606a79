"""Read-only checks before and beside a sync: preflight, authorization, topic identity and
`dzlineage doctor`."""
