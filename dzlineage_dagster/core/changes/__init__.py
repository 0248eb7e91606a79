"""Change detection: what changed in the platform, and why, read from where AWS says so.

:mod:`.cloudtrail` reads the CloudTrail "AWS API Call via CloudTrail" events EventBridge
delivers (to an SQS queue) for the registry's schemas, the MSK Connect connectors and the Glue
tables the sinks write, each as one change; it also names the calls watched, so the EventBridge
rules (the CloudFormation template, the sandbox's demo queue) are derived from one list.

Imports: :mod:`..connectors`.
"""
