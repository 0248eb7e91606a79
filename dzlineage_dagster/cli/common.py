"""What every command that talks to AWS shares."""

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.settings import InvalidSettings, MissingSettings
from dzlineage_dagster.sync.errors import SyncError

#: What stops a command before it can answer: settings, AWS access.
SETUP_ERRORS = (MissingSettings, InvalidSettings, SyncError, ClientError, BotoCoreError)
