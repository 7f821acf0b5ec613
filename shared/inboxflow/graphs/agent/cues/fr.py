"""French cues of the agent's escalations."""

MEDICAL_ADVICE: tuple[str, ...] = (
    "posologie",
    "dose",
    "combien de comprimés",
    "à quelle fréquence",
    "puis-je prendre",
    "est-ce que je peux prendre",
    "sans danger",
    "enceinte",
    "grossesse",
    "allaite",
    "allaitement",
    "interaction",
    "en même temps que",
    "effet secondaire",
    "effets secondaires",
    "effet indésirable",
    "arrêter de prendre",
    "surdosage",
    "a avalé",
    "intoxication",
)
CHILD: tuple[str, ...] = ("mon fils", "ma fille", "mon enfant", "mon bébé", "nourrisson")
CHILD_USE: tuple[str, ...] = ("donner", "combien", "fièvre")
COMPLAINT: tuple[str, ...] = (
    "plainte",
    "inacceptable",
    "scandaleux",
    "déçu",
    "mécontent",
    "énervé",
    "exaspér",
    "en colère",
    "aucune réponse",
    "personne ne répond",
    "autre pharmacie",
)
