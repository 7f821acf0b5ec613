"""``reviewers:`` and ``channels:`` of inboxflow.yaml: who is notified how, and the mistakes refused."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inboxflow.adapters.channels import ChannelNotifier, channel_factory, live_delivery
from inboxflow.adapters.notifiers import OutboxNotifier
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.config import ConfigError, InboxflowConfig, load_config, parse_config
from inboxflow.ports.notifier import Notification, NotificationRefused

SES = {"channels": {"ses": {"region": "eu-west-1", "sender": "approvals@brightlane.io"}}}


def parse(text: str) -> InboxflowConfig:
    import yaml

    return parse_config(yaml.safe_load(textwrap.dedent(text)), {}, source="inboxflow.yaml")


def error_of(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(text)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


def test_unlisted_reviewers_and_configs_without_the_section_stay_on_gmail() -> None:
    assert InboxflowConfig().delivery("ana@x.io").channel == "gmail"
    config = parse(
        """
        channels: {ses: {region: eu-west-1, sender: approvals@brightlane.io}}
        reviewers:
          Ana@Partner.example: {channel: ses}
          ben@partner.example: {channel: ses, region: us-east-1, sender: noreply@brightlane.io}
          ops-room: {channel: webhook, url_env: INBOXFLOW_WEBHOOK_OPS, format: slack}
          gil@brightlane.io: {}
        """
    )
    ana = config.delivery("ana@partner.example")  # keys match without case
    assert (ana.channel, ana.region, ana.sender) == ("ses", "eu-west-1", "approvals@brightlane.io")
    ben = config.delivery("ben@partner.example")
    assert (ben.region, ben.sender) == ("us-east-1", "noreply@brightlane.io")
    ops = config.delivery("ops-room")
    assert (ops.channel, ops.url_env, ops.format) == ("webhook", "INBOXFLOW_WEBHOOK_OPS", "slack")
    assert config.delivery("gil@brightlane.io").channel == "gmail"
    assert config.delivery("zed@x.io").channel == "gmail"
    assert config.channels_in_use() == ["gmail", "ses", "webhook"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "reviewers: {ana@x.io: {channel: sms}}",
            "inboxflow.yaml: reviewers[ana@x.io]: unknown channel 'sms'; channels: gmail, ses, webhook",
        ),
        (
            "reviewers: {ana@x.io: {channel: ses, sender: a@b.io}}",
            "inboxflow.yaml: reviewers[ana@x.io]: channel ses needs a region",
        ),
        (
            "reviewers: {ana@x.io: {channel: ses, region: eu-west-1}}",
            "inboxflow.yaml: reviewers[ana@x.io]: channel ses needs a sender",
        ),
        (
            "reviewers: {ana@x.io: {channel: ses, region: europe, sender: a@b.io}}",
            "inboxflow.yaml: reviewers[ana@x.io]: 'europe' is not an AWS region",
        ),
        (
            "channels: {ses: {sender: nobody}}",
            "inboxflow.yaml: channels.ses.sender: 'nobody' is not an email address",
        ),
        (
            "reviewers: {ops: {channel: webhook, url: 'http://chat.example/hook'}}",
            "inboxflow.yaml: reviewers[ops]: webhook URL must be https",
        ),
        (
            "reviewers: {ops: {channel: webhook}}",
            "inboxflow.yaml: reviewers[ops]: channel webhook needs one of url or url_env",
        ),
        (
            "reviewers: {ops: {channel: webhook, url: 'https://a.example', url_env: X}}",
            "inboxflow.yaml: reviewers[ops]: channel webhook needs one of url or url_env",
        ),
        (
            "reviewers: {ops: {channel: webhook, url_env: 'not a name'}}",
            "inboxflow.yaml: reviewers[ops]: url_env 'not a name' is not a variable name",
        ),
        (
            "reviewers: {ana@x.io: {channel: ses, url: 'https://a.example'}}",
            "inboxflow.yaml: reviewers[ana@x.io]: 'url' does not apply to channel ses",
        ),
        (
            "reviewers: {ops-room: {channel: gmail}}",
            "inboxflow.yaml: reviewers[ops-room]: 'ops-room' is not an email address (give `address:`)",
        ),
        (
            "reviewers: {ana@x.io: {channel: gmail, colour: red}}",
            "inboxflow.yaml: reviewers[ana@x.io]: unknown key 'colour'",
        ),
        (
            "reviewers: {ana@x.io: {}, ANA@x.io: {}}",
            "inboxflow.yaml: reviewers[ANA@x.io]: repeats 'ana@x.io'",
        ),
    ],
)
def test_each_mistake_is_one_clear_line(text: str, expected: str) -> None:
    message = error_of(text)
    assert message.startswith(expected), message


def test_plain_http_webhooks_only_on_a_loopback_host() -> None:
    config = parse("reviewers: {ops: {channel: webhook, url: 'http://127.0.0.1:8099/hook'}}")
    assert config.delivery("ops").url == "http://127.0.0.1:8099/hook"


def test_a_reviewer_key_given_twice_in_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "inboxflow.yaml"
    path.write_text("reviewers:\n  ana@x.io: {channel: gmail}\n  ana@x.io: {channel: ses}\n")
    with pytest.raises(ConfigError, match=r"duplicate key 'ana@x\.io'"):
        load_config(path, {})


def test_delivery_mode_is_live_on_cloud_functions_and_outbox_elsewhere() -> None:
    assert live_delivery({"K_SERVICE": "inboxflow-pipeline-review"}) is True
    assert live_delivery({}) is False
    assert live_delivery({"INBOXFLOW_NOTIFY_DELIVERY": "live"}) is True
    assert live_delivery({"K_SERVICE": "x", "INBOXFLOW_NOTIFY_DELIVERY": "outbox"}) is False
    with pytest.raises(
        ValueError, match="INBOXFLOW_NOTIFY_DELIVERY='mail': expected live or outbox"
    ):
        live_delivery({"INBOXFLOW_NOTIFY_DELIVERY": "mail"})


def test_a_reviewer_entry_with_an_address_is_notified_there(tmp_path: Path) -> None:
    store = SqliteCheckpointStore(tmp_path / "o.db")
    config = parse_config(
        {**SES, "reviewers": {"ops-lead": {"channel": "ses", "address": "lead@x.io"}}}, {}
    )
    notifier = ChannelNotifier(config, channel_factory(store, FakeClock(), {}, None), store)
    notifier.send(Notification("ops-lead", "S", "t", "<p>h</p>", "k-lead"))
    assert [(m["to"], m["channel"]) for m in notifier.messages()] == [("lead@x.io", "ses")]
    store.close()


def test_outbox_delivery_keeps_each_channel_apart_and_sends_nothing(tmp_path: Path) -> None:
    store = SqliteCheckpointStore(tmp_path / "o.db")
    config = parse_config(
        {
            **SES,
            "reviewers": {
                "ana@x.io": {"channel": "ses"},
                "ops": {"channel": "webhook", "url": "https://chat.example/h"},
            },
        },
        {},
    )
    build = channel_factory(store, FakeClock(), {}, None)
    notifier = ChannelNotifier(config, build, store)
    for reviewer in ("ana@x.io", "ops", "gil@x.io"):
        receipt = notifier.send(Notification(reviewer, "S", "t", "<p>h</p>", f"k-{reviewer}"))
        assert notifier.find(f"k-{reviewer}") is not None and receipt["id"]
    assert {m["to"]: m["channel"] for m in notifier.messages()} == {
        "ana@x.io": "ses",
        "ops": "webhook",
        "gil@x.io": "gmail",
    }
    assert all(m["delivered"] is False for m in notifier.messages())
    assert isinstance(notifier.adapter(config.delivery("ops")), OutboxNotifier)
    store.close()


def test_a_webhook_url_from_the_environment_is_checked_when_first_used(tmp_path: Path) -> None:
    store = SqliteCheckpointStore(tmp_path / "o.db")
    config = parse_config({"reviewers": {"ops": {"channel": "webhook", "url_env": "HOOK"}}}, {})
    live = {"INBOXFLOW_NOTIFY_DELIVERY": "live"}
    for environ, expected in (
        (live, "HOOK is not set"),
        ({**live, "HOOK": "http://chat.example/h"}, "HOOK: webhook URL must be https"),
    ):
        notifier = ChannelNotifier(
            config, channel_factory(store, FakeClock(), environ, None), store
        )
        with pytest.raises(NotificationRefused, match=expected):
            notifier.send(Notification("ops", "S", "t", "<p>h</p>", "k"))
    store.close()


def test_boto3_is_imported_only_by_a_function_that_emails_an_ses_reviewer(tmp_path: Path) -> None:
    config = tmp_path / "inboxflow.yaml"
    config.write_text(
        "channels: {ses: {region: eu-west-1, sender: a@brightlane.io}}\n"
        "reviewers: {ana@x.io: {channel: ses}}\n"
    )
    script = textwrap.dedent(
        """
        import os
        import sys
        from inboxflow.ports.notifier import Notification
        from inboxflow.services import build_runtime
        from inboxflow.settings import Settings
        runtime = build_runtime(Settings.from_env(os.environ))
        notifier = runtime.ports.approvals.notifier
        assert notifier.find("nothing") is None
        print("before", "boto3" in sys.modules)
        try:
            notifier.send(Notification("ana@x.io", "S", "t", "<p>h</p>", "k"))
        except Exception as exc:  # no credentials and no network: refused or unavailable
            print("error", type(exc).__name__)
        print("after", "boto3" in sys.modules)
        """
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "INBOXFLOW_CONFIG": str(config),
        "INBOXFLOW_HOME": str(tmp_path / "home"),
        "INBOXFLOW_NOTIFY_DELIVERY": "live",
        "AWS_ENDPOINT_URL_SESV2": "http://127.0.0.1:9",
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert "before False" in lines and "after True" in lines, done.stdout


def test_a_webhook_takes_slack_json_on_a_slack_url_and_chat_json_elsewhere(tmp_path: Path) -> None:
    from inboxflow.adapters.webhook_notifier import WebhookNotifier
    from inboxflow.config import webhook_format

    assert webhook_format("https://hooks.slack.com/services/T/B/x") == "slack"
    assert webhook_format("https://chat.googleapis.com/v1/spaces/A/messages?key=k") == "chat"
    assert webhook_format("https://evil-slack.com.example/h") == "chat"
    assert webhook_format("https://hooks.slack.com/services/T/B/x", "chat") == "chat"
    store = SqliteCheckpointStore(tmp_path / "o.db")
    config = parse_config(
        {
            "reviewers": {
                "ops": {"channel": "webhook", "url": "https://hooks.slack.com/services/T/B/x"}
            }
        },
        {},
    )
    live = channel_factory(store, FakeClock(), {"INBOXFLOW_NOTIFY_DELIVERY": "live"}, None)
    adapter = ChannelNotifier(config, live, store).adapter(config.delivery("ops"))
    assert isinstance(adapter, WebhookNotifier) and adapter.format == "slack"
    store.close()


# --- notify: each | digest | both, and the digest's schedule ---------------------------------


def test_notify_defaults_to_an_email_per_pause_and_digest_settings_merge() -> None:
    assert InboxflowConfig().notify_mode("ana@x.io") == "each"
    assert InboxflowConfig().digest_reviewers() == []
    config = parse(
        """
        digest: {interval_minutes: 30, daily_at: "07:30", timezone: Europe/Paris}
        reviewers:
          Ana@x.io: {notify: digest}
          ben@x.io: {notify: both, digest: {daily_at: null}}
          ops-lead: {channel: webhook, url: "https://chat.example/h", notify: digest}
          gil@x.io: {channel: gmail}
        """
    )
    assert [config.notify_mode(r) for r in ("ana@x.io", "ben@x.io", "ops-lead", "gil@x.io")] == [
        "digest",
        "both",
        "digest",
        "each",
    ]
    assert config.digest_reviewers() == ["Ana@x.io", "ben@x.io", "ops-lead"]
    ana, ben = config.digest_schedule("ana@x.io"), config.digest_schedule("ben@x.io")
    assert (ana.interval_minutes, ana.daily_at, ana.timezone) == (30, "07:30", "Europe/Paris")
    assert (ben.interval_minutes, ben.daily_at, ben.timezone) == (30, None, "Europe/Paris")
    default = InboxflowConfig().digest_schedule("x@y.io")
    assert (default.interval_minutes, default.daily_at, default.timezone) == (60, "08:00", "UTC")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("reviewers: {a@x.io: {notify: weekly}}", "reviewers[a@x.io].notify: Input should be"),
        ('digest: {daily_at: "8am"}', "daily_at '8am' is not a time HH:MM"),
        ('digest: {daily_at: "24:00"}', "daily_at '24:00' is not a time HH:MM"),
        ("digest: {timezone: Mars/Olympus}", "timezone 'Mars/Olympus' is not an IANA time zone"),
        ("digest: {interval_minutes: 0}", "digest.interval_minutes: Input should be greater"),
        (
            "reviewers: {a@x.io: {notify: digest, digest: {timezone: Nowhere}}}",
            "timezone 'Nowhere' is not an IANA time zone",
        ),
    ],
)
def test_bad_digest_settings_are_refused_in_one_line(text: str, expected: str) -> None:
    message = error_of(text)
    assert message.startswith("inboxflow.yaml: ") and expected in message, message
