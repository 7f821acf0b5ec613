"""The support desk's cue lists, one TOML file per language (``en.toml``...): data, read by :mod:`..signals`.

Each file holds ``match`` (``words``: a cue matches whole words, for languages written
with spaces; ``substring``: anywhere, for Japanese) and the table ``cues``: for each cue
kind, the phrases people use for it. A phrase is matched on
folded text (case-folded, accents removed, punctuation read as spaces), so write it
either way. In ``words`` mode ``*`` ends a word stem (``vypadk*`` is výpadku, výpadky...)
and ``~`` stands for up to five words in between (``charged ~ twice``).

Cue kinds: the supervisor's signals (``security``, ``outage``, ``data_loss``,
``billing_error``, ``service_disruption``, ``general_question``); ``demand`` (a refund,
compensation, cancelling); ``escalation_demand`` (a manager, a lawyer, legal steps: a person
at once); ``complaint`` (negative sentiment); and
the topics that name the specialist (``billing_topic``, ``technical_topic``).
"""

LANGUAGES = ("en", "cs", "de", "fr", "es", "ja")
"""The files of this package, each named by its language (ISO 639-1)."""
