"""Writes the evaluation set's mail (``evals/mail/**.eml``) with the standard library.

The .eml files are the data set and are committed; this script is how they were
made, kept so that a maintainer can see (and change) exactly which charset and
transfer encoding each message uses. Run from the repository root:

    python3 evals/tools/make_mail.py            # rewrites evals/mail/
    python3 evals/tools/make_mail.py --check    # exit 1 when a file differs

Only the standard ``email`` package is used (``mailkit.py``): MIME structure,
header encoding (RFC 2047), quoted-printable/base64 bodies and the legacy
charsets (iso-8859-2, windows-1252, iso-8859-1, iso-2022-jp, shift_jis) come
out as a mail client would write them. One module per graph holds its messages.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mail_agent
import mail_assistant
import mail_pipeline
import mail_planner
import mail_support
from mailkit import write_mails

ROOT = Path(__file__).resolve().parents[1] / "mail"


def main(argv: list[str]) -> int:
    for module in (mail_pipeline, mail_support, mail_agent, mail_assistant, mail_planner):
        module.build()
    return write_mails(ROOT, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
