"""German cues of the agent's escalations."""

MEDICAL_ADVICE: tuple[str, ...] = (
    "dosis",
    "dosierung",
    "wie oft",
    "wie viele tabletten",
    "einnehmen",
    "ist es sicher",
    "unbedenklich",
    "schwanger",
    "stillzeit",
    "stille",
    "wechselwirkung",
    "zusammen mit",
    "nebenwirkung",
    "absetzen",
    "überdosis",
    "verschluckt",
    "vergiftung",
)
CHILD: tuple[str, ...] = ("jährig", "mein sohn", "meine tochter", "mein kind", "baby", "kleinkind")
CHILD_USE: tuple[str, ...] = ("geben", "wie viel", "fieber")
COMPLAINT: tuple[str, ...] = (
    "beschwerde",
    "unverschämt",
    "inakzeptabel",
    "enttäusch",
    "skandal",
    "verärgert",
    "frustriert",
    "wütend",
    "niemand antwortet",
    "niemand meldet sich",
    "nie eine antwort",
    "so kann das nicht weitergehen",
    "andere apotheke",
)
