"""The AWS wire protocols the sandbox speaks, driven by botocore's service models (:mod:`.aws`)."""
