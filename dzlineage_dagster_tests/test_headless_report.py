"""What `dzlineage sync` prints, word for word, on the seeded demo: the first sync, an idle
one, one after a single schema change, a failing topic, its dry run, and a sync that cannot
start. Operators and cron mails read these texts, and the call counts in them are the product's
cost promise (an idle sync reads the registry listing, one parameter and a sixtieth of the
registry's versions), so they are pinned as
literals: a changed text or an extra call fails here first."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.catalog.discovery import UpdatedTimeBehaviour, clock_sweep
from dzlineage_dagster.core.catalog.registry_cursor import RegistryCursor
from dzlineage_dagster.core.mapping.ssm_names import digest_parameter_name, scoped_prefix
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.platform import writes
from dzlineage_dagster_tests.test_catalog_operators import rows_of, scoped_parameters

BROKEN_SCHEMA = {"type": "record", "name": "x", "fields": [{"name": "bad-name", "type": "string"}]}
BROKEN_AVRO = (
    "schema shop.sales.broken version 1 is not valid Avro: schema.bad-name: field name must "
    "match [A-Za-z_][A-Za-z0-9_]*"
)


#: A line of the log (`cmd_sync`'s format): a timestamp, then the level.
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR) ", re.M)


def printed(text: str) -> str:
    """``text`` without the padding `_table` leaves at the end of each line."""
    return "\n".join(line.rstrip() for line in text.splitlines())


def expected(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def stored_cursor(platform) -> str:
    settings = platform.settings
    registry_arn = platform.client("glue").get_registry(
        RegistryId={"RegistryName": settings.registry_name}
    )["RegistryArn"]
    scope = scoped_prefix(settings.ssm_prefix, settings.domain_id, settings.project_id)
    return scoped_parameters(platform)[digest_parameter_name(scope, registry_arn)]


def test_first_idle_and_changed_sync_reports(platform, capsys):
    # A sync that posted lineage reads it back: one ListLineageEvents, then GetLineageNode of
    # each posted topic's node, its table's ARN and its asset's node. The version sweep reads
    # its topics' records by name: in the packed layout (the default) a chain's bucket only
    # where its parent overflowed (here the root alone holds all 8), so 10 names a call (104
    # calls in the one-per-topic layout; 109 when a topic's whole chain and its two one-per-topic
    # names filled one GetParameters). Each table topic's schema tags are read for the owners its
    # asset lists (one GetTags each). Every sync looks for foreign runs on its jobs (one
    # ListLineageEvents page down to its newest run): 112. The version sweep's state is not
    # written: it learnt nothing of UpdatedTime (every schema has one version).
    assert dzlineage(["sync"]) == 0
    assert printed(capsys.readouterr().out) == expected(
        """
        topic                        asset          catalog       lineage
        ---------------------------  -------------  ------------  -------------------------------------------------------------------------------------------------------------------------------------
        __debezium-heartbeat.shop    not-cataloged                no edge: heartbeat topic of connector 'shop-debezium-source' (from its config)
        shop.archive.orders          created        published r1  posted: shop.sales.orders_archive_2025, shop.sales.orders_archive_2026 -> shop.archive.orders -> lakehouse.orders_history (connector)
        shop.inventory.customers     created        published r1  posted: shop.inventory.customers -> shop.inventory.customers -> lakehouse.inventory_customers (connector)
        shop.inventory.products      created        published r1  posted: shop.inventory.products -> shop.inventory.products -> lakehouse.inventory_products (connector)
        shop.inventory.stock_levels  created        published r1  posted: shop.inventory.stock_levels -> shop.inventory.stock_levels -> lakehouse.inventory_stock_levels (connector)
        shop.sales.order_lines       created        published r1  posted: shop.sales.order_lines -> shop.sales.order_lines -> lakehouse.sales_order_lines (connector)
        shop.sales.orders            created        published r1  posted: shop.sales.orders -> shop.sales.orders -> lakehouse.sales_orders (connector)
        shop.sales.payments          created        published r1  posted: shop.sales.payments -> shop.sales.payments -> lakehouse.sales_payments (connector)

        lineage read-back: all landed (7 tables, 7 topic assets of 7 topics, 21 GetLineageNode calls)

        8 topics, 0 failed, 112 AWS API calls
        """
    )
    cursor = stored_cursor(platform)
    assert RegistryCursor.from_text(cursor) is not None, cursor

    # Idle: the registry listing, the custom types' check, the cursor and the version sweep's
    # state (one GetParameters; nothing written: the sweep's slice is the clock's), the sweep's mapping records and GetSchema:
    # until the registry shows what UpdatedTime does the sweep checks 20 topics a run (here all
    # 8, one GetParameters of the root bucket: it did not overflow, and its "migrated" mark says
    # no one-per-topic name is left to read; 7 GetParameters before both flags, 30 calls then),
    # and probes one schema of two versions (GetSchemaVersion); the look for foreign runs stops
    # at the newest event, the sync's own, whose record the sweep has read: one call.
    assert dzlineage(["sync"]) == 0
    assert printed(capsys.readouterr().out) == expected(
        """
        registry shop-cdc unchanged since the last complete sync: nothing to do

        8 topics, 0 failed, 25 AWS API calls
        """
    )
    # That probe learnt that UpdatedTime moves here: its one write keeps that. Learnt once, an
    # idle sync writes nothing at all (its sweep's slice is the run's minute's, not a position).
    platform.sandbox.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert writes(platform.sandbox.control.call_counts(), "ssm", "datazone", "glue") == {}

    # One new version: that topic is revised (after one GetAsset of its latest revision) and
    # re-posted. Only the topics of the registry cursor's changed bucket are considered (here
    # that topic alone): the others are not even read. The sweep reads its records 10 names a
    # call (a topic's whole chain and one-per-topic names before the buckets' overflow and
    # migrated flags: 4 more calls); the revised topic's schema tags are read (its owners); the
    # read-back reads its two events' status by id (GetLineageEvent); the foreign runs' look,
    # one page: 41. The version sweep checks the slice of the run's minute (5 topics of 8 here,
    # where UpdatedTime moves): their records may sit a bucket level deeper than those of the
    # first sync's topics (which bucket a record lands in depends on that sync's threads'
    # order), one GetParameters more; when the changed topic is among them, the sweep probes
    # its new version (one GetSchemaVersion).
    platform.register_new_version("shop.sales.orders", "coupon")
    minutes = {int(time.time() // 60)}
    assert dzlineage(["sync"]) == 0
    minutes.add(int(time.time() // 60))
    topics = list(platform.registry_topics())
    # Both when the run crossed a minute (it cannot tell which minute it read).
    probes = {
        "shop.sales.orders" in clock_sweep(topics, minute, UpdatedTimeBehaviour.MOVES)
        for minute in minutes
    }
    out = printed(capsys.readouterr().out)
    *report, last = out.splitlines()
    assert "\n".join(report).rstrip("\n") == expected(
        """
        topic              asset    catalog       lineage
        -----------------  -------  ------------  ------------------------------------------------------------------------------------
        shop.sales.orders  revised  published r2  posted: shop.sales.orders -> shop.sales.orders -> lakehouse.sales_orders (connector)

        lineage read-back: all landed (1 tables, 1 topic assets of 1 topics, 3 GetLineageNode calls)
        """
    )
    allowed = {
        f"8 topics, 0 failed, {41 + probe + deeper} AWS API calls"
        for probe in probes
        for deeper in (0, 1)
    }
    assert last in allowed, (last, allowed)
    assert stored_cursor(platform) != cursor, "the changed registry's cursor was not recorded"


def test_a_failing_topic_in_the_dry_run_and_the_sync_reports(platform, capsys):
    platform.create_schema("shop.sales.broken", BROKEN_SCHEMA, compatibility="NONE")
    assert dzlineage(["sync", "--dry-run"]) == 1
    plan = printed(capsys.readouterr().out).splitlines()
    assert plan[0].split() == ["topic", "asset", "catalog", "schema", "lineage"]
    assert plan[1].split() == ["-" * len(word) for word in plan[1].split()]
    assert rows_of("\n".join(plan), "shop.sales.broken") == [
        ["shop.sales.broken", "FAILED", BROKEN_AVRO]
    ]
    orders = next(line for line in plan if line.startswith("shop.sales.orders "))
    assert orders.split(None, 4) == [
        "shop.sales.orders",
        "create",
        "publish",
        "v1",
        "post: shop.sales.orders -> shop.sales.orders -> lakehouse.sales_orders (connector)",
    ]
    assert plan[-2:] == ["", "dry run: nothing was written (9 rows)"]

    assert dzlineage(["sync"]) == 1
    report = printed(capsys.readouterr().out).splitlines()
    assert rows_of("\n".join(report), "shop.sales.broken") == [
        ["shop.sales.broken", "FAILED", f"schema: {BROKEN_AVRO}"]
    ]
    # The version sweep reads its records 10 names a call, not a chain each (5 calls fewer);
    # the failed topic is recorded for the next sync to retry (one PutParameter).
    assert report[-1] == "9 topics, 1 failed, 114 AWS API calls"


def test_a_sync_that_cannot_start_names_the_call_the_error_and_the_spent_retries(platform, capsys):
    platform.control.set_faults(FaultRule(service="datazone", operation="GetFormType"))
    assert dzlineage(["sync"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "dzlineage sync: could not start: GetFormType failed: ThrottlingException: Injected "
        "fault (throttle) for datazone.GetFormType (retry budget exhausted: all 5 attempts "
        "failed (DZLINEAGE_MAX_ATTEMPTS))\n"
    )


def test_the_summary_goes_to_stdout_and_the_log_to_stderr(platform):
    # A separate process, as a terminal or a cron mail sees it: the table alone on stdout (a
    # `> summary.txt` keeps it whole), the log apart on stderr, and none of it with --quiet.
    command = [sys.executable, "-m", "dzlineage_dagster.cli", "sync"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[0].split() == ["topic", "asset", "catalog", "lineage"]
    assert first.stdout.rstrip().endswith("AWS API calls")
    assert not LOG_LINE.search(first.stdout), first.stdout
    assert "INFO syncing 8 topics of registry shop-cdc" in first.stderr
    assert all(LOG_LINE.match(line) for line in first.stderr.splitlines()), first.stderr

    platform.register_new_version("shop.sales.orders", "coupon")
    quiet = subprocess.run([*command, "--quiet"], capture_output=True, text=True, timeout=300)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    assert rows_of(quiet.stdout, "shop.sales.orders")[0][1] == "revised", quiet.stdout
