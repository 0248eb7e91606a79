"""What the relay knows of the platform, read from AWS and kept for a TTL: the Glue catalog's
tables (:mod:`.glue_catalog`, to name a producer's table by its ARN) and the platform's own
datasets (:mod:`.datasets`, to say what it could not map)."""
