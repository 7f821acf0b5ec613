"""``owner_key``: the doubles serve several mailboxes and calendars, so ``me``/``primary`` name none."""

from __future__ import annotations

import pytest

from inboxflow.dev.doubles.errors import ApiError, owner_key


def test_an_owner_is_keyed_trimmed_and_in_lower_case() -> None:
    assert owner_key(" Ana@Example.COM ", "me", "refused", "invalidArgument") == "ana@example.com"


def test_the_alias_of_the_caller_s_own_is_refused_with_the_reason_given() -> None:
    with pytest.raises(ApiError) as caught:
        owner_key(" Primary", "primary", "name the calendar", "invalid")
    assert (caught.value.status, caught.value.message, caught.value.reason) == (
        400,
        "name the calendar",
        "invalid",
    )
