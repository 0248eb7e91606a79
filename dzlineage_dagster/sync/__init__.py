"""The sync engine: the AWS edge of the project, shared by the Dagster assets and the CLI."""
