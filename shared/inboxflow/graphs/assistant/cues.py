"""The words the assistant's rules look for, per language (data, read by :mod:`.reading`,
:mod:`.when` and :mod:`.guards`).

Every cue is written lower case without diacritics: the text is folded the same way
before matching (``Děkuji`` and ``DEKUJI`` alike), so Czech and German inflections are
listed as stems where a stem is safe (``schuzk`` for schůzka, schůzku, schůzce). Latin
cues match at a word start; Japanese cues (no spaces between words) anywhere.
"""

from __future__ import annotations

Cues = dict[str, tuple[str, ...]]

THANKS: Cues = {
    "en": ("thank you", "thanks", "thx", "many thanks", "much appreciated", "grateful"),
    "cs": ("dekuji", "dekujeme", "diky", "dik", "dekuju"),
    "de": ("danke", "vielen dank", "herzlichen dank", "besten dank"),
    "fr": ("merci",),
    "es": ("gracias", "muchas gracias", "te agradezco", "le agradezco"),
    "ja": ("ありがとう", "感謝", "お礼"),
}
"""A thank-you."""

REQUESTS: Cues = {
    "en": (
        "could you",
        "can you",
        "would you",
        "will you",
        "please",
        "let me know",
        "are you free",
        "are you available",
        "can we",
        "could we",
        "shall we",
        "should we",
        "let's",
        "i need",
        "we need you",
        "send me",
        "do you have",
        "would it be possible",
        "any chance",
        "when can",
    ),
    "cs": (
        "muzete",
        "mohl bys",
        "mohla bys",
        "mohl byste",
        "mohla byste",
        "mohli byste",
        "mohli bychom",
        "muzeme",
        "prosim",
        "dej vedet",
        "dejte vedet",
        "poslete",
        "posli",
        "potrebuji",
        "potrebuju",
        "mas cas",
        "mate cas",
    ),
    "de": (
        "konnen sie",
        "konnten sie",
        "kannst du",
        "konntest du",
        "hatten sie",
        "hattest du",
        "wurden sie",
        "bitte",
        "lassen sie mich wissen",
        "konnen wir",
        "konnten wir",
        "ich brauche",
        "schicken sie",
    ),
    "fr": (
        "pourriez-vous",
        "pourriez vous",
        "pouvez-vous",
        "pouvez vous",
        "peux-tu",
        "pourrions-nous",
        "pouvons-nous",
        "merci de",
        "s'il vous plait",
        "s'il te plait",
        "j'ai besoin",
        "etes-vous disponible",
    ),
    "es": (
        "podrias",
        "podria",
        "puedes",
        "puede usted",
        "podemos",
        "podriamos",
        "por favor",
        "necesito",
        "me envias",
        "me puedes",
        "tienes tiempo",
        "estas disponible",
    ),
    "ja": (
        "ください",
        "下さい",
        "でしょうか",
        "ますか",
        "ませんか",
        "お願い",
        "いただけ",
        "頂け",
        "教えて",
    ),
}
"""Something is asked of the reader (a question mark counts too)."""

MEETING_WORDS: Cues = {
    "en": (
        "meet",
        "meeting",
        "call",
        "chat",
        "catch up",
        "sync",
        "get together",
        "talk",
        "session",
        "sit down",
        "workshop",
    ),
    "cs": ("schuzk", "potkat", "potkame", "sejit", "sejdeme", "hovor", "call", "porad"),
    "de": ("treffen", "termin", "gesprach", "besprechung", "telefonat", "call", "meeting"),
    "fr": ("reunion", "rendez-vous", "appel", "rencontrer", "se voir", "echange"),
    "es": ("reunion", "reunirnos", "reunirme", "llamada", "cita", "vernos", "hablar"),
    "ja": ("打ち合わせ", "打合せ", "ミーティング", "会議", "面談", "通話", "お話"),
}
"""A meeting."""

MEETING_ASKS: Cues = {
    "en": (
        "could we",
        "can we",
        "shall we",
        "should we",
        "let's",
        "lets",
        "are you free",
        "are you available",
        "do you have time",
        "would you have time",
        "have time for",
        "set up",
        "schedule",
        "book",
        "find a time",
        "find time",
        "hop on",
        "would love to",
        "would like to",
        "i'd like to",
        "i'd love to",
        "open to",
        "when works",
        "what time works",
    ),
    "cs": (
        "muzeme",
        "mohli bychom",
        "mas cas",
        "mate cas",
        "mel bys cas",
        "mela bys cas",
        "meli byste cas",
        "domluvit",
        "naplanovat",
        "kdy se ti hodi",
        "kdy se vam hodi",
        "hodilo",
    ),
    "de": (
        "konnen wir",
        "konnten wir",
        "zeit fur",
        "zeit haben",
        "haben sie zeit",
        "hast du zeit",
        "vereinbaren",
        "ausmachen",
        "lass uns",
        "lassen sie uns",
        "passt ihnen",
        "passt dir",
    ),
    "fr": (
        "pourrions-nous",
        "pourrions nous",
        "pouvons-nous",
        "seriez-vous disponible",
        "etes-vous disponible",
        "on peut",
        "organiser",
        "planifier",
        "fixer",
    ),
    "es": (
        "podemos",
        "podriamos",
        "tienes tiempo",
        "tiene tiempo",
        "estas disponible",
        "esta disponible",
        "agendar",
        "programar",
        "organizar",
    ),
    "ja": ("でしょうか", "ませんか", "ますか", "お願い", "いただけ", "頂け", "ご都合", "分ほど"),
}
"""What makes a sentence naming a meeting a request for one (not a question about one); a
length asked for (``45 minutes``, ``na hodinu``) does too."""

MONEY_ASKS: Cues = {
    "en": (
        "gift card",
        "gift cards",
        "giftcard",
        "itunes card",
        "apple card",
        "google play card",
        "steam card",
        "send me the codes",
        "wire transfer",
        "wire the",
        "wire money",
        "bank transfer",
        "transfer the funds",
        "transfer funds",
        "make a payment",
        "process a payment",
        "urgent payment",
        "new bank details",
        "change of bank details",
        "updated bank details",
        "bitcoin",
        "crypto",
    ),
    "cs": (
        "darkove karty",
        "darkovou kartu",
        "darkove poukazy",
        "poukazky",
        "prevod penez",
        "bankovni prevod",
        "posli penize",
        "poslete penize",
        "zaplatit",
        "nove bankovni udaje",
        "nove cislo uctu",
    ),
    "de": (
        "geschenkkarte",
        "geschenkkarten",
        "gutscheinkarte",
        "gutscheinkarten",
        "guthabenkarte",
        "uberweisung",
        "uberweisen",
        "zahlung",
        "neue bankverbindung",
    ),
    "fr": (
        "carte cadeau",
        "cartes cadeaux",
        "cartes-cadeaux",
        "virement",
        "paiement urgent",
        "nouvelles coordonnees bancaires",
        "nouveau rib",
    ),
    "es": (
        "tarjeta de regalo",
        "tarjetas de regalo",
        "transferencia",
        "pago urgente",
        "nuevos datos bancarios",
        "nueva cuenta bancaria",
    ),
    "ja": ("ギフトカード", "プリペイドカード", "振込", "振り込み", "送金", "入金"),
}
"""A request for money, gift cards or payment details: what a fraudster asks for."""

COLD_PITCH: Cues = {
    "en": (
        "minutes of your time",
        "companies like yours",
        "companies like",
        "teams like yours",
        "i'd love to show you",
        "i would love to show you",
        "show you how we",
        "book a demo",
        "quick demo",
        "free trial",
        "grow your",
        "boost your",
        "increase your",
        "tripled",
        "doubled",
        "3x",
        "10x",
        "lead generation",
        "more leads",
        "seo",
        "our agency",
        "our platform helps",
        "reaching out because",
        "following up on my last email",
        "bumping this",
    ),
    "cs": ("nezavazne", "bezplatnou ukazku", "zvysit prodeje", "vice zakazniku", "nase agentura"),
    "de": (
        "unverbindlich",
        "kostenlose demo",
        "mehr umsatz",
        "mehr kunden",
        "unsere agentur",
        "wie wir unternehmen",
    ),
    "fr": ("demonstration gratuite", "augmenter vos", "notre agence", "plus de clients"),
    "es": ("demostracion gratuita", "aumentar sus ventas", "nuestra agencia", "mas clientes"),
    "ja": ("無料デモ", "売上アップ", "集客", "ご提案させて"),
}
"""An unsolicited sales pitch."""

# --- when: the day, the time of day and the length asked for (read by :mod:`.when`) ----------

WEEKDAYS: dict[int, tuple[str, ...]] = {
    0: ("monday", "mon", "pondeli", "montag", "lundi", "lunes", "月曜"),
    1: ("tuesday", "tue", "tues", "utery", "dienstag", "mardi", "martes", "火曜"),
    2: (
        "wednesday",
        "wed",
        "streda",
        "stredu",
        "stredy",
        "mittwoch",
        "mercredi",
        "miercoles",
        "水曜",
    ),
    3: ("thursday", "thu", "thurs", "ctvrtek", "ctvrtku", "donnerstag", "jeudi", "jueves", "木曜"),
    4: ("friday", "fri", "patek", "patku", "freitag", "vendredi", "viernes", "金曜"),
    5: ("saturday", "sobota", "sobotu", "samstag", "samedi", "sabado", "土曜"),
    6: ("sunday", "nedele", "nedeli", "sonntag", "dimanche", "domingo", "日曜"),
}
"""Day names by ``date.weekday()`` (Czech in the cases a request puts them)."""

NEXT_WEEK: tuple[str, ...] = (
    "next week",
    "pristi tyden",
    "pristim tydnu",
    "nachste woche",
    "nachsten woche",
    "la semaine prochaine",
    "semaine prochaine",
    "la proxima semana",
    "proxima semana",
    "la semana que viene",
    "来週",
)
"""The week after the one the email was sent in."""

DAYS_FROM_NOW: dict[int, tuple[str, ...]] = {
    0: ("today", "dnes", "heute", "aujourd'hui", "hoy", "今日", "本日"),
    1: ("tomorrow", "zitra", "morgen", "demain", "manana", "明日"),
    2: ("day after tomorrow", "pozitri", "ubermorgen", "apres-demain", "pasado manana", "明後日"),
}
"""Days counted from the day the email was sent."""

NOT_TOMORROW: tuple[str, ...] = ("am morgen", "guten morgen", "la manana", "por la manana")
"""Phrases where "morgen" and "mañana" mean the morning, not tomorrow."""

PARTS_OF_DAY: dict[str, tuple[tuple[str, ...], str, str]] = {
    "morning": (
        (
            "morning",
            "dopoledne",
            "rano",
            "vormittag",
            "am morgen",
            "morgens",
            "matin",
            "matinee",
            "por la manana",
            "la manana",
            "午前",
            "朝",
        ),
        "09:00",
        "12:00",
    ),
    "midday": (("noon", "lunch", "poledne", "mittag", "midi", "mediodia", "昼"), "12:00", "14:00"),
    "afternoon": (
        ("afternoon", "odpoledne", "nachmittag", "apres-midi", "por la tarde", "la tarde", "午後"),
        "13:00",
        "17:00",
    ),
    "evening": (
        ("evening", "vecer", "abend", "soir", "por la noche", "夕方", "夜"),
        "17:00",
        "20:00",
    ),
}
"""Parts of a day: the words, and the window (local ``HH:MM``) each stands for."""

AFTER: tuple[str, ...] = ("after", "from", "po", "nach", "ab", "apres", "a partir de", "despues de")
"""Before a time: the meeting starts then or later ("anything after 1 pm")."""

BEFORE: tuple[str, ...] = ("before", "until", "pred", "vor", "bis", "avant", "antes de")
"""Before a time: the meeting ends by then."""

MINUTE_WORDS: tuple[str, ...] = (
    "minutes",
    "minute",
    "mins",
    "min",
    "minut",
    "minuty",
    "minuten",
    "minutos",
    "分",
)
HOUR_WORDS: tuple[str, ...] = (
    "hours",
    "hour",
    "hrs",
    "hr",
    "h",
    "hodiny",
    "hodin",
    "hodinu",
    "hodina",
    "stunden",
    "stunde",
    "heures",
    "heure",
    "horas",
    "hora",
    "時間",
)
NAMED_LENGTHS: dict[int, tuple[str, ...]] = {
    30: (
        "half an hour",
        "half hour",
        "pul hodiny",
        "pulhodinu",
        "halbe stunde",
        "une demi-heure",
        "demi-heure",
        "media hora",
        "半時間",
    ),
    60: (
        "an hour",
        "one hour",
        "a full hour",
        "na hodinu",
        "jednu hodinu",
        "eine stunde",
        "une heure",
        "una hora",
        "一時間",
    ),
    90: (
        "an hour and a half",
        "hour and a half",
        "hodinu a pul",
        "anderthalb stunden",
        "eineinhalb stunden",
        "une heure et demie",
        "una hora y media",
    ),
}
"""Lengths said in words."""
