"""The Gmail double as ``inboxflow dev`` runs it: a process that relays watch
notifications to the Pub/Sub emulator, as Gmail publishes them to the watch topic.

``python -m inboxflow.dev.gmail --port N --topic projects/P/topics/T [--seed]``
serves the Gmail v1 + Calendar v3 double (``doubles.google_api``) and, for
every change of a watched mailbox, publishes ``{emailAddress, historyId}`` to
the topic (on ``PUBSUB_EMULATOR_HOST``). One
extra route, ``POST /__inboxflow/deliver?mailbox=ADDRESS`` with the raw
RFC 5322 bytes as body, delivers a message into a mailbox (``inboxflow send
--gmail``). Used only locally.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from inboxflow.dev.process_groups import ctrl_c_stops

DELIVER_PATH = "/__inboxflow/deliver"
MAX_DELIVER_BYTES = 25 * 1024 * 1024

log = logging.getLogger("inboxflow.dev.gmail")


class PubSubRelay:
    """Publishes Gmail notifications to the watch topic (the double calls only for watched mailboxes)."""

    def __init__(self, topic: str) -> None:
        from google.cloud import pubsub_v1  # type: ignore[attr-defined]

        self.topic = topic
        self.publisher = pubsub_v1.PublisherClient()
        self.published = 0
        self._lock = threading.Lock()

    def __call__(self, email_address: str, history_id: int) -> None:
        """``on_notify`` hook of the double."""
        body = json.dumps({"emailAddress": email_address, "historyId": int(history_id)})
        self.publisher.publish(self.topic, body.encode()).result(timeout=30)
        with self._lock:
            self.published += 1
        log.info("notified %s of %s at %s", self.topic, email_address, history_id)


def relay_app(double: Any) -> Any:
    """A WSGI app: the double, plus the deliver route."""
    from werkzeug.wrappers import Request, Response

    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        request = Request(environ)
        if request.path != DELIVER_PATH:
            return double(environ, start_response)  # type: ignore[no-any-return]
        mailbox = request.args.get("mailbox", "")
        raw = request.get_data(cache=False)
        if request.method != "POST" or "@" not in mailbox or not raw:
            response = Response("POST raw bytes to ?mailbox=ADDRESS", status=400)
        elif len(raw) > MAX_DELIVER_BYTES:
            response = Response("message too large", status=413)
        else:
            labels = request.args.getlist("label") or ["INBOX", "UNREAD"]
            gmail_id = double.deliver(mailbox, raw, labels)
            body = {"id": gmail_id, "historyId": double.history_id(mailbox)}
            response = Response(json.dumps(body), mimetype="application/json")
        return response(environ, start_response)  # type: ignore[no-any-return]

    return app


def deliver(url: str, mailbox: str, raw: bytes, timeout_s: float = 30.0) -> dict[str, Any]:
    """Deliver ``raw`` into ``mailbox`` of a running dev Gmail double; returns ``{id, historyId}``."""
    import urllib.parse
    import urllib.request

    query = urllib.parse.urlencode({"mailbox": mailbox})
    request = urllib.request.Request(
        f"{url.rstrip('/')}{DELIVER_PATH}?{query}",
        data=raw,
        method="POST",
        headers={"Content-Type": "message/rfc822"},
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        result: dict[str, Any] = json.loads(response.read())
    return result


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the double with the Pub/Sub relay until interrupted."""
    from werkzeug.serving import make_server

    from inboxflow.dev.doubles.google_api import GoogleApiDouble
    from inboxflow.dev.doubles.oauth_api import OAuthDouble

    parser = argparse.ArgumentParser(description="Gmail double relaying notifications to Pub/Sub")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--topic", required=True, help="projects/P/topics/T to publish to")
    parser.add_argument("--seed", action="store_true", help="load the bundled workspace seed")
    parser.add_argument(
        "--oauth-client",
        type=Path,
        default=None,
        help="also serve Google's OAuth endpoints, and write a Desktop client's JSON here",
    )
    options = parser.parse_args(argv)
    ctrl_c_stops()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    oauth = OAuthDouble() if options.oauth_client else None
    double = GoogleApiDouble(oauth=oauth)
    if options.seed:
        double.seed_from_workspace_json()
    double.on_notify(PubSubRelay(options.topic))
    server = make_server("127.0.0.1", options.port, relay_app(double), threaded=True)
    print(f"gmail double listening on http://127.0.0.1:{server.server_port}", flush=True)
    if oauth is not None:
        secrets = oauth.client_secrets(base_url=f"http://127.0.0.1:{server.server_port}")
        options.oauth_client.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(options.oauth_client, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(secrets, file)
        print(
            f"OAuth endpoints served; a Desktop client's JSON is in {options.oauth_client}",
            flush=True,
        )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
