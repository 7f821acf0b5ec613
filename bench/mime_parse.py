"""Benchmark of MIME parsing (not a test): parse time per message, and import costs.

Parses every message of the MIME corpus (tests/data/mime) and the bundled
sample inbox's .eml files ``--rounds`` times, plus generated huge messages, and
prints the median and p95 per message; then measures, in fresh interpreters,
the import time of ``inboxflow.mail`` (what every node pays) and what the first
HTML message adds (inscriptis + lxml, imported lazily).

    .venv/bin/python bench/mime_parse.py [--rounds 50]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from inboxflow.mail import parse_message, sample_inbox_dir

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "mime"


def huge_messages() -> dict[str, bytes]:
    """Generated messages over 2 MB: plain text, HTML tables, a 3 MB attachment."""
    head = b"From: a@b.example\r\nTo: c@d.example\r\nSubject: huge\r\nMIME-Version: 1.0\r\n"
    text = ("Zeile mit Umlauten äöü und Emoji 🚚 — " * 3 + "\n").encode() * 20_000
    row = b"<tr><td>Order</td><td>&quot;quoted&quot;</td></tr>\n"
    html = b"<html><body><table>" + row * 50_000 + b"</table></body></html>"
    attachment = b"x" * 3_000_000
    import base64

    return {
        "huge-text-2.6MB": head + b"Content-Type: text/plain; charset=utf-8\r\n\r\n" + text,
        "huge-html-2.4MB": head + b"Content-Type: text/html; charset=utf-8\r\n\r\n" + html,
        "huge-attachment-4MB": head
        + b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\n'
        + b"see attached\r\n--B\r\nContent-Type: application/zip; name=a.zip\r\n"
        + b"Content-Transfer-Encoding: base64\r\n\r\n"
        + base64.encodebytes(attachment)
        + b"--B--\r\n",
    }


def timed(action: Callable[[], object], rounds: int) -> list[float]:
    """Milliseconds of each of ``rounds`` runs."""
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


IMPORT_PROBE = """
import time
started = time.perf_counter()
import inboxflow.mail as mail
imported = time.perf_counter()
mail.parse_message(b"From: a@b.example\\r\\n\\r\\nplain", mailbox="m@x.example")
first_plain = time.perf_counter()
html = b"From: a@b.example\\r\\nContent-Type: text/html\\r\\n\\r\\n<p>x</p>"
mail.parse_message(html, mailbox="m@x.example")
first_html = time.perf_counter()
mail.parse_message(html, mailbox="m@x.example")
second_html = time.perf_counter()
print(imported - started, first_plain - imported, (first_html - first_plain) - (second_html - first_html))
"""


def import_costs(repeats: int = 9) -> tuple[float, float, float]:
    """Median ms, each in a fresh interpreter: import inboxflow.mail, the first plain
    message (imports mail.mime), and what the first HTML message adds (inscriptis, lxml)."""
    runs = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", IMPORT_PROBE], check=True, capture_output=True, text=True
        ).stdout.split()
        runs.append([float(value) * 1000 for value in out])
    return (
        statistics.median(r[0] for r in runs),
        statistics.median(r[1] for r in runs),
        statistics.median(r[2] for r in runs),
    )


def main() -> None:
    """Print per-message parse times and import costs."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()

    messages = {p.name: p.read_bytes() for p in sorted(CORPUS.glob("*.eml"))}
    messages |= {
        f"sample/{p.name}": p.read_bytes() for p in sorted(sample_inbox_dir().glob("*.eml"))
    }
    parse_message(messages[next(iter(messages))], mailbox="m@x.example")  # warm up
    parse_message(
        b"From: a@b.example\r\nContent-Type: text/html\r\n\r\n<p>x</p>", mailbox="m@x.example"
    )

    print(f"{'message':48} {'bytes':>9} {'median ms':>10} {'p95 ms':>8}")
    medians = []
    for name, raw in messages.items():
        samples = timed(lambda raw=raw: parse_message(raw, mailbox="m@x.example"), args.rounds)
        medians.append(statistics.median(samples))
        p95 = statistics.quantiles(samples, n=20)[-1]
        print(f"{name:48} {len(raw):>9} {medians[-1]:>10.2f} {p95:>8.2f}")
    print(
        f"\ncorpus + samples: {len(messages)} messages, median of medians "
        f"{statistics.median(medians):.2f} ms, mean {statistics.fmean(medians):.2f} ms, "
        f"max {max(medians):.2f} ms per message"
    )

    print()
    for name, raw in huge_messages().items():
        samples = timed(lambda raw=raw: parse_message(raw, mailbox="m@x.example"), 3)
        email = parse_message(raw, mailbox="m@x.example")
        size = len(email.model_dump_json().encode())
        print(
            f"{name:48} {len(raw):>9} {statistics.median(samples):>10.1f} ms "
            f"(stored email {size / 1024:.0f} KB, truncated={email.body_truncated})"
        )

    mail_ms, plain_ms, html_ms = import_costs()
    print(
        f"\nfresh interpreter, medians of 9: import inboxflow.mail {mail_ms:.0f} ms; "
        f"first plain message {plain_ms:.0f} ms (imports mail.mime); "
        f"the first HTML message adds {html_ms:.0f} ms (inscriptis + lxml, lazy)"
    )


if __name__ == "__main__":
    main()
