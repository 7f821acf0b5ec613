"""Japanese cues of the agent's escalations (substrings)."""

MEDICAL_ADVICE: tuple[str, ...] = (
    "用量",
    "服用量",
    "何錠",
    "飲んでも",
    "飲み合わせ",
    "併用",
    "妊娠",
    "妊婦",
    "授乳",
    "副作用",
    "飲みすぎ",
    "誤飲",
    "過剰摂取",
)
CHILD: tuple[str, ...] = ("歳の", "子供", "子ども", "息子", "娘", "赤ちゃん", "乳児")
CHILD_USE: tuple[str, ...] = ("飲ませ", "何錠", "熱")
COMPLAINT: tuple[str, ...] = (
    "苦情",
    "クレーム",
    "納得でき",
    "不満",
    "腹が立",
    "返事がない",
    "返信がない",
    "いい加減",
)
