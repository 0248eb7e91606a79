"""The local AWS sandbox: one HTTP endpoint that plays AWS for boto3, and the demo built on it.

Only the ``sandbox`` extra installs what it needs (moto, werkzeug, dagster-webserver); the product
never imports it. One room per role:

- :mod:`.server`: the endpoint (routing by SigV4 service, call log, fault injection, the admin
  paths under ``/_sandbox/``, the list of who answers which operation) and its HTTP client;
- :mod:`.emulators`: the services moto lacks, emulated (DataZone, MSK Connect);
- :mod:`.moto_patches`: where moto differs from AWS and how the sandbox closes the gap, applied
  when a sandbox starts (importing changes nothing in moto);
- :mod:`.protocol`: the AWS wire protocols, driven by botocore's models;
- :mod:`.demo`: the demo CDC platform (``demo_platform.yaml``) and its seeding;
- :mod:`.commands`: the ``dzlineage sandbox`` and ``dzlineage demo`` commands.
"""
