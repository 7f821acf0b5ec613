"""``serving``: a WSGI double answers in ``respond``; its clock is the one given, else the wall clock."""

from __future__ import annotations

import time

import requests
from werkzeug.wrappers import Request, Response

from inboxflow.dev.doubles.serving import WsgiServing, clock_reader


class _Echo(WsgiServing):
    thread_name = "echo-double"

    def respond(self, request: Request) -> Response:
        return Response(f"{request.method} {request.path}", status=201)


class _Silent(WsgiServing):
    thread_name = "silent-double"


class _Clock:
    def now(self) -> int:
        return 42


def test_a_wsgi_double_serves_what_respond_answers() -> None:
    with _Echo() as double:
        answer = requests.get(double.url + "/some/path", timeout=10)
    assert (answer.status_code, answer.text) == (201, "GET /some/path")


def test_a_double_without_respond_answers_an_error() -> None:
    with _Silent() as double:
        answer = requests.get(double.url + "/", timeout=10)
    assert answer.status_code == 500


def test_the_clock_given_is_read_each_time_and_none_is_the_wall_clock() -> None:
    assert clock_reader(_Clock())() == 42.0
    before = time.time()
    assert before <= clock_reader(None)() <= time.time()
