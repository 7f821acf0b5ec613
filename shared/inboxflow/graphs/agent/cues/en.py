"""English cues of the agent's escalations (data; see ``cues/__init__.py``)."""

MEDICAL_ADVICE: tuple[str, ...] = (
    # dosage
    "dose",
    "dosage",
    "dosing",
    "how often",
    "how many tablets",
    "how many pills",
    "how many capsules",
    "how much should",
    "how much can",
    "maximum daily",
    "per day",
    "per kg",
    # whether to take it, and with what
    "can i take",
    "can i give",
    "may i take",
    "should i take",
    "ok to take",
    "okay to take",
    "safe to take",
    "safe to use",
    "is it safe",
    "safe for",
    "safe during",
    "combine",
    "mix with",
    "interact",
    # pregnancy and breastfeeding
    "pregnan",
    "expecting a baby",
    "breastfeed",
    "breast-feed",
    "breast feed",
    "nursing",
    # side effects, reactions, stopping
    "side effect",
    "adverse",
    "reaction to",
    "should i stop",
    "stop taking",
    "is it normal",
    "dizzy",
    "drowsy",
    "sleepy",
    "rash",
    "swelling",
    # overdose
    "overdose",
    "swallowed",
    "too many tablets",
    "too many pills",
    "took too many",
    "poison",
)
"""A question a pharmacist answers, not the stock desk."""

CHILD: tuple[str, ...] = (
    "year-old",
    "year old",
    "years old",
    "month-old",
    "months old",
    "my son",
    "my daughter",
    "my child",
    "my kid",
    "my baby",
    "toddler",
    "infant",
    "newborn",
)
CHILD_USE: tuple[str, ...] = ("give", "how many", "how much", "take", "fever", "temperature")
"""A child and one of these in one message: a question of a child's dose."""

COMPLAINT: tuple[str, ...] = (
    "complain",
    "complaint",
    "unacceptable",
    "disappointed",
    "outrageous",
    "scandal",
    "nobody knew",
    "no one knew",
    "who is responsible",
    "refund",
    "rude",
    "terrible service",
    "wasted my",
)
