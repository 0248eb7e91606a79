"""The demo CDC platform: its description (``demo_platform.yaml``) and the seeding of a sandbox
from it (:mod:`.seed`)."""
