"""The words customers label their details with, per field and language (data, read by
:mod:`.extract`).

Labels are matched case-insensitively and without diacritics (``Código postal`` and
``CODIGO POSTAL`` alike), so each is written once, in lower case, without accents.
A label may be followed by ``#``, ``no.``, ``number`` or ``nr`` (``License #:``,
``DL no.:``) before its colon. Japanese labels are matched as written.
"""

from __future__ import annotations

LABELS: dict[str, dict[str, tuple[str, ...]]] = {
    "full_name": {
        "en": ("name", "full name", "customer name", "applicant", "applicant name", "driver name"),
        "es": ("nombre", "nombre completo"),
        "de": ("name", "vollstandiger name"),
        "fr": ("nom", "nom complet"),
        "cs": ("jmeno", "jmeno a prijmeni", "cele jmeno"),
        "ja": ("氏名", "名前", "お名前"),
    },
    "first_name": {
        "en": ("first name", "given name", "forename"),
        "es": ("nombre de pila",),
        "de": ("vorname",),
        "fr": ("prenom",),
        "cs": ("krestni jmeno",),
        "ja": ("名",),
    },
    "last_name": {
        "en": ("last name", "family name", "surname"),
        "es": ("apellido", "apellidos"),
        "de": ("nachname", "familienname"),
        "fr": ("nom de famille",),
        "cs": ("prijmeni",),
        "ja": ("姓",),
    },
    "date_of_birth": {
        "en": ("date of birth", "birth date", "birthdate", "dob", "d.o.b.", "born", "born on"),
        "es": ("fecha de nacimiento", "nacimiento"),
        "de": ("geburtsdatum", "geboren", "geboren am"),
        "fr": ("date de naissance", "ne le", "nee le"),
        "cs": ("datum narozeni", "narozen", "narozena"),
        "ja": ("生年月日",),
    },
    "zip_code": {
        "en": ("zip", "zip code", "zipcode", "postal code", "postcode"),
        "es": ("codigo postal", "cp", "c.p."),
        "de": ("plz", "postleitzahl"),
        "fr": ("code postal",),
        "cs": ("psc",),
        "ja": ("郵便番号",),
    },
    "license_number": {
        "en": (
            "license",
            "licence",
            "license number",
            "licence number",
            "driver's license",
            "driver's licence",
            "drivers license",
            "driver license",
            "driving licence",
            "driving license",
            "driver's license number",
            "driver license number",
            "dl",
            "dl number",
            "license id",
        ),
        "es": ("licencia", "licencia de conducir", "numero de licencia", "licencia de manejo"),
        "de": ("fuhrerschein", "fuhrerscheinnummer"),
        "fr": ("permis", "permis de conduire", "numero de permis"),
        "cs": ("ridicsky prukaz", "cislo ridickeho prukazu", "rp"),
        "ja": ("免許証番号", "運転免許証", "免許番号"),
    },
    "license_state": {
        "en": (
            "license state",
            "licence state",
            "state of license",
            "state of licence",
            "issuing state",
            "state issued",
            "issued by",
            "issued in",
            "dl state",
            "license issued in",
            "state",
        ),
        "es": ("estado de la licencia", "estado de emision", "estado"),
        "de": ("ausstellender bundesstaat", "bundesstaat"),
        "fr": ("etat de delivrance", "etat"),
        "cs": ("stat vydani",),
        "ja": ("発行州",),
    },
    "years_licensed": {
        "en": ("years licensed", "years of driving", "years driving", "driving experience"),
        "es": ("anos con licencia", "anos de experiencia"),
        "de": ("jahre fuhrerschein", "fahrerfahrung"),
        "fr": ("annees de permis",),
        "cs": ("roky rizeni",),
        "ja": ("運転歴",),
    },
    "accidents_last_5_years": {
        "en": ("accidents", "accidents in the last 5 years", "claims"),
        "es": ("accidentes",),
        "de": ("unfalle",),
        "fr": ("accidents", "sinistres"),
        "cs": ("nehody",),
        "ja": ("事故歴",),
    },
    "vin": {
        "en": ("vin", "vin number", "vehicle identification number"),
        "es": ("numero de identificacion del vehiculo", "niv"),
        "de": ("fahrgestellnummer", "fin"),
        "fr": ("numero de serie", "numero vin"),
        "cs": ("cislo karoserie",),
        "ja": ("車台番号",),
    },
    "vehicle_year": {
        "en": ("year", "model year", "vehicle year", "car year"),
        "es": ("ano", "ano del modelo"),
        "de": ("baujahr", "modelljahr"),
        "fr": ("annee", "annee du modele"),
        "cs": ("rok vyroby",),
        "ja": ("年式",),
    },
    "vehicle_make": {
        "en": ("make", "manufacturer", "vehicle make", "car make"),
        "es": ("marca",),
        "de": ("marke", "hersteller"),
        "fr": ("marque",),
        "cs": ("znacka",),
        "ja": ("メーカー",),
    },
    "vehicle_model": {
        "en": ("model", "vehicle model", "car model"),
        "es": ("modelo",),
        "de": ("modell",),
        "fr": ("modele",),
        "cs": ("model",),
        "ja": ("車種",),
    },
    "vehicle": {
        "en": ("car", "vehicle", "auto", "automobile"),
        "es": ("auto", "coche", "carro", "vehiculo"),
        "de": ("auto", "fahrzeug", "wagen"),
        "fr": ("voiture", "vehicule"),
        "cs": ("auto", "vuz", "vozidlo"),
        "ja": ("車", "車両"),
    },
    "annual_mileage": {
        "en": ("mileage", "annual mileage", "miles per year", "miles a year", "yearly mileage"),
        "es": ("millaje", "kilometraje", "millas al ano"),
        "de": ("jahresfahrleistung", "meilen pro jahr"),
        "fr": ("kilometrage", "miles par an"),
        "cs": ("najezd", "rocni najezd"),
        "ja": ("年間走行距離",),
    },
}
"""Per field, per language: the labels a customer writes before the value (``Label: value``)."""

NONE_WORDS: tuple[str, ...] = (
    "none",
    "no",
    "zero",
    "ninguno",
    "ninguna",
    "keine",
    "kein",
    "aucun",
    "aucune",
    "zadne",
    "zadna",
    "nula",
    "なし",
)
"""Words that say "zero" for a count (``Accidents: none``)."""

NO_ACCIDENTS: tuple[str, ...] = (
    "no accidents",
    "never had an accident",
    "accident-free",
    "accident free",
    "clean record",
    "sin accidentes",
    "ningun accidente",
    "keine unfalle",
    "unfallfrei",
    "aucun accident",
    "sans accident",
    "zadne nehody",
    "bez nehod",
    "bez nehody",
    "事故なし",
    "無事故",
)
"""Phrases saying the driver had no accident."""

ACCIDENT_WORDS: tuple[str, ...] = ("accidents?", "accidentes?", "unfall", "unfalle", "nehod[ay]?")
"""What "N accidents" counts, as regular expressions over folded text."""

MILE_WORDS: tuple[str, ...] = ("miles", "mi", "millas", "meilen", "mil")
"""Units of a yearly distance in miles."""

LICENSED_FOR: tuple[str, ...] = (
    r"licen[cs]ed\s+(?:for\s+)?(\d{1,2})\s+years",
    r"(?:driving|been\s+driving)\s+(?:for\s+)?(\d{1,2})\s+years",
    r"(\d{1,2})\s+years\s+(?:licen[cs]ed|of\s+driving|driving)",
    r"con\s+licencia\s+(?:desde\s+hace\s+)?(\d{1,2})\s+anos",
    r"(\d{1,2})\s+anos\s+(?:con\s+licencia|de\s+experiencia|manejando|conduciendo)",
    r"(?:fuhrerschein|fahre)\s+seit\s+(\d{1,2})\s+jahren",
    r"(?:permis|conduis)\s+depuis\s+(\d{1,2})\s+ans",
    r"ridicak\s+(?:mam\s+)?(\d{1,2})\s+(?:let|roku|roky)",
    r"ridicsky\s+prukaz\s+(?:mam\s+)?(\d{1,2})\s+(?:let|roku|roky)",
    r"運転歴\s*(\d{1,2})\s*年",
)
"""Sentences saying how many years the driver has been licensed (folded text)."""

US_STATES: frozenset[str] = frozenset(
    [
        "AL",
        "AK",
        "AZ",
        "AR",
        "CA",
        "CO",
        "CT",
        "DE",
        "DC",
        "FL",
        "GA",
        "HI",
        "ID",
        "IL",
        "IN",
        "IA",
        "KS",
        "KY",
        "LA",
        "ME",
        "MD",
        "MA",
        "MI",
        "MN",
        "MS",
        "MO",
        "MT",
        "NE",
        "NV",
        "NH",
        "NJ",
        "NM",
        "NY",
        "NC",
        "ND",
        "OH",
        "OK",
        "OR",
        "PA",
        "RI",
        "SC",
        "SD",
        "TN",
        "TX",
        "UT",
        "VT",
        "VA",
        "WA",
        "WV",
        "WI",
        "WY",
    ]
)
"""The two-letter codes of the states (and DC) that issue driver's licenses."""

NOT_A_QUOTE: dict[str, tuple[str, ...]] = {
    "en": (
        "file a claim",
        "filing a claim",
        "make a claim",
        "open a claim",
        "claim number",
        "my claim",
        "police report",
        "hit my",
        "crashed",
        "was stolen",
        "got stolen",
        "tow truck",
        "cancel my policy",
        "cancel the policy",
    ),
    "es": ("presentar un reclamo", "reclamacion", "siniestro", "me chocaron", "cancelar mi poliza"),
    "de": ("schaden melden", "schadensmeldung", "schadenfall", "polizeibericht", "kundigen"),
    "fr": ("declarer un sinistre", "declaration de sinistre", "constat", "resilier"),
    "cs": ("pojistna udalost", "nahlasit skodu", "nahlaseni skody", "vypovedet smlouvu"),
    "ja": ("事故の報告", "保険金請求", "解約"),
}
"""What says the mail is a claim or a cancellation, not a quote request (folded text)."""

QUOTE_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("quote", "quotation", "estimate", "insure my", "insurance for my", "new policy"),
    "es": ("cotizacion", "cotizar", "presupuesto"),
    "de": ("angebot", "kostenvoranschlag"),
    "fr": ("devis",),
    "cs": ("nabidka", "nabidku", "kalkulace", "kalkulaci"),
    "ja": ("見積",),
}
"""What says the mail asks for a quote (folded text)."""
